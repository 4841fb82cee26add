/** The widgets the Applications pages share: loading states, severity badges, paged tables, "as of". */
import type { ComponentChildren } from "preact";
import { DEVELOPMENT_SCOPES, SCOPE_UNKNOWN, type Severity } from "../../../contracts/platform.ts";
import { ErrorBox } from "../../ui/error-box.tsx";
import { Loading } from "../../ui/loading.tsx";
import { Pager } from "../../ui/pager.tsx";
import type { Loaded } from "../../ui/use-api.ts";
import { APPS, appPath } from "./paths.ts";

/** Renders `children(data)` once loaded; a status line while loading; the problem's detail on error. */
export function Show<T>(props: {
  loaded: Loaded<T>;
  what: string;
  children: (data: T) => ComponentChildren;
}) {
  const { loaded } = props;
  if (loaded.error !== undefined) return <ErrorBox error={loaded.error} onRetry={loaded.reload} />;
  if (loaded.loading || loaded.data === undefined) return <Loading what={props.what} />;
  return <>{props.children(loaded.data)}</>;
}

export function SeverityBadge({ severity }: { severity: Severity | string | null }) {
  if (!severity) return <span class="sev sev-none">none</span>;
  return <span class={`sev sev-${severity.toLowerCase()}`}>{severity}</span>;
}

/** Scopes a production install leaves out: their badge says so at a glance. */
const DEVELOPMENT = new Set<string>(DEVELOPMENT_SCOPES);

/** A package version's scope (production, dev, test, ...; unknown when the analysis did not say). */
export function ScopeBadge({ scope }: { scope: string }) {
  const kind = scope === SCOPE_UNKNOWN ? "unknown" : DEVELOPMENT.has(scope) ? "development" : "runtime";
  return (
    <span class={`badge scope scope-${kind}`} title={`scope: ${scope}`}>
      {scope}
    </span>
  );
}

/** "2024-03-01T00:00:00Z" as "2024-03-01 00:00 UTC": unambiguous, the same for every viewer. */
export function formatDateTime(iso: string): string {
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

/**
 * The "as of" date picker: a calendar day, sent to the API as `date` = the end of that day in UTC, so
 * the latest analysis made on or before the chosen day is shown.
 */
export function AsOfPicker(props: {
  value: string | undefined;
  onChange: (day: string | undefined) => void;
}) {
  return (
    <div class="field as-of">
      <label for="as-of">As of (UTC day)</label>
      <input
        id="as-of"
        type="date"
        value={props.value?.slice(0, 10) ?? ""}
        onChange={(e) => props.onChange((e.currentTarget as HTMLInputElement).value || undefined)}
      />
      {props.value ? (
        <button type="button" onClick={() => props.onChange(undefined)}>
          Latest analysis
        </button>
      ) : null}
    </div>
  );
}

/** The shell's pager for list operations without a total: a full page may have a next one. */
function ListPager(props: {
  skip: number;
  limit: number;
  shown: number;
  label: string;
  onSkip: (skip: number) => void;
}) {
  if (props.skip === 0 && props.shown < props.limit) return null;
  return (
    <Pager
      offset={props.skip}
      limit={props.limit}
      hasMore={props.shown === props.limit}
      onChange={props.onSkip}
      label={`${props.label} pages`}
    />
  );
}

/** The sub-navigation of one application's pages. */
export function AppNav({ name, current }: { name: string; current: string }) {
  const links: [string, string][] = [
    ["overview", appPath(name)],
    ["CVEs", appPath(name, "cves")],
    ["packages", appPath(name, "packages")],
    ["compare", appPath(name, "compare")],
  ];
  return (
    <nav class="app-nav" aria-label={`Application ${name}`}>
      <a href={APPS}>All applications</a>
      <ul>
        {links.map(([label, href]) => (
          <li key={href}>
            <a href={href} aria-current={label === current ? "page" : undefined}>
              {label[0]?.toUpperCase()}
              {label.slice(1)}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}

/**
 * One page of a list loaded from the API, as `Show` shows it (a status line while loading, the problem
 * on error): `empty` when the first page has no rows, else a table (scrolling sideways on narrow
 * screens) with a column header per `headers` and a row per `row`; then the list's pager.
 */
export function PagedTable<Row>(props: {
  loaded: Loaded<readonly Row[]>;
  what: string;
  empty: ComponentChildren;
  caption: string;
  tableClass?: string;
  headers: readonly string[];
  row: (row: Row) => ComponentChildren;
  pager: { skip: number; limit: number; label: string; onSkip: (skip: number) => void };
}) {
  const { pager } = props;
  return (
    <Show loaded={props.loaded} what={props.what}>
      {(rows) => (
        <>
          {rows.length === 0 && pager.skip === 0 ? (
            <p>{props.empty}</p>
          ) : (
            <div class="table-scroll">
              <table class={props.tableClass}>
                <caption>{props.caption}</caption>
                <thead>
                  <tr>
                    {props.headers.map((header) => (
                      <th scope="col" key={header}>
                        {header}
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody>{rows.map(props.row)}</tbody>
              </table>
            </div>
          )}
          <ListPager {...pager} shown={rows.length} />
        </>
      )}
    </Show>
  );
}
