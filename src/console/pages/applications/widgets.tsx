/** Small pieces the Applications pages share: loading REST data, severity badges, paging, "as of". */
import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import { useLocation } from "preact-iso";
import { ApiError, apiGet } from "../../api.ts";
import type { Severity } from "./types.ts";

/** Where the Applications pages live; every link is built from it. */
export const APPS = "/console/applications";

export const appPath = (name: string, ...rest: string[]): string =>
  [APPS, encodeURIComponent(name), ...rest.map(encodeURIComponent)].join("/");

export type Loaded<T> =
  | { state: "loading" }
  | { state: "error"; message: string; status?: number }
  | { state: "ok"; data: T };

/** GETs `path` whenever it or `query` changes; an answer that arrives after a newer request is dropped. */
export function useApi<T>(path: string | null, query?: Record<string, string | number | undefined>): Loaded<T> {
  const [loaded, setLoaded] = useState<Loaded<T>>({ state: "loading" });
  const key = JSON.stringify([path, query]);
  // biome-ignore lint/correctness/useExhaustiveDependencies: `key` stands for path and query
  useEffect(() => {
    if (path === null) return;
    let current = true;
    setLoaded({ state: "loading" });
    apiGet<T>(path, query).then(
      (data) => current && setLoaded({ state: "ok", data }),
      (error: unknown) => {
        if (!current) return;
        if (error instanceof ApiError) {
          setLoaded({
            state: "error",
            status: error.status,
            message: error.problem.detail ?? error.problem.title,
          });
        } else setLoaded({ state: "error", message: String((error as Error)?.message ?? error) });
      },
    );
    return () => {
      current = false;
    };
  }, [key]);
  return loaded;
}

/** Renders `children(data)` once loaded; a status line while loading; the problem's detail on error. */
export function Show<T>(props: { loaded: Loaded<T>; what: string; children: (data: T) => ComponentChildren }) {
  const { loaded } = props;
  if (loaded.state === "loading") {
    return (
      <p class="loading" role="status">
        Loading {props.what}…
      </p>
    );
  }
  if (loaded.state === "error") {
    return (
      <div class="error-box" role="alert">
        <p>
          Could not load {props.what}
          {loaded.status ? ` (HTTP ${loaded.status})` : ""}: {loaded.message}
        </p>
      </div>
    );
  }
  return <>{props.children(loaded.data)}</>;
}

export function SeverityBadge({ severity }: { severity: Severity | string | null }) {
  if (!severity) return <span class="sev sev-none">none</span>;
  return <span class={`sev sev-${severity.toLowerCase()}`}>{severity}</span>;
}

/** "2024-03-01T00:00:00Z" as "2024-03-01 00:00 UTC": unambiguous, the same for every viewer. */
export function formatDateTime(iso: string): string {
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

/** The page's query string as state: reading it, and replacing some of its keys (history entry). */
export function useQueryState(): [Record<string, string>, (changes: Record<string, string | undefined>) => void] {
  const location = useLocation();
  const query = location.query;
  const set = (changes: Record<string, string | undefined>) => {
    const next = new URLSearchParams();
    for (const [k, v] of Object.entries({ ...query, ...changes })) if (v !== undefined && v !== "") next.set(k, v);
    const search = next.toString();
    location.route(`${location.path}${search ? `?${search}` : ""}`);
  };
  return [query, set];
}

/**
 * The "as of" date picker: a calendar day, sent to the API as `date` = the end of that day in UTC, so
 * the latest analysis made on or before the chosen day is shown.
 */
export function AsOfPicker(props: { value: string | undefined; onChange: (day: string | undefined) => void }) {
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

/** The REST `date` for a picked day (end of the day, UTC); undefined for the latest analysis. */
export const dateOfDay = (day: string | undefined): string | undefined => {
  if (!day) return undefined;
  if (/^\d{4}-\d{2}-\d{2}$/.test(day)) return `${day}T23:59:59Z`;
  // A link from the timeline carries the analysis's exact instant.
  return /^\d{4}-\d{2}-\d{2}T[\d:.]+Z$/.test(day) ? day : undefined;
};

/**
 * Previous/next paging for list operations that return at most `limit` items: a full page may have a
 * next one (the API gives no total), which then answers with an empty list.
 */
export function Pager(props: {
  skip: number;
  limit: number;
  shown: number;
  label: string;
  onSkip: (skip: number) => void;
}) {
  const { skip, limit, shown } = props;
  return (
    <nav class="pager" aria-label={`${props.label} pages`}>
      <button type="button" disabled={skip === 0} onClick={() => props.onSkip(Math.max(0, skip - limit))}>
        Previous
      </button>
      <span aria-live="polite">
        {shown === 0 ? `No ${props.label} from ${skip + 1}` : `${props.label} ${skip + 1}–${skip + shown}`}
      </span>
      <button type="button" disabled={shown < limit} onClick={() => props.onSkip(skip + limit)}>
        Next
      </button>
    </nav>
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

export const intParam = (value: string | undefined, fallback: number): number => {
  const n = Number(value);
  return Number.isInteger(n) && n >= 0 ? n : fallback;
};

/** The document title follows the page (screen readers announce it on navigation). */
export function useTitle(title: string): void {
  useEffect(() => {
    document.title = `${title} · imaging console`;
  }, [title]);
}
