import type { AnalysisHistoryEntry, Comparison } from "../../../contracts/resources.ts";
import { PageTitle } from "../../ui/page-title.tsx";
import { useApiGet } from "../../ui/use-api.ts";
import { useAppPage } from "./page-state.ts";
import { AppNav, formatDateTime, Show } from "./widgets.tsx";

/** Two analyses of an application side by side: what was added and removed between them. */
export function CompareAnalyses() {
  const { name, query, setQuery } = useAppPage();
  const app = `/applications/${encodeURIComponent(name)}`;
  const history = useApiGet<AnalysisHistoryEntry[]>(`${app}/analyses`, { limit: 1000 });
  const dates = history.data?.map((h) => h.analysis.dateTime) ?? [];
  // Default: the latest analysis against the one before it.
  const to = query.to ?? dates.at(-1);
  const from = query.from ?? dates.at(-2) ?? dates.at(-1);
  const comparison = useApiGet<Comparison>(from && to ? `${app}/compare` : undefined, { from, to });
  const select = (id: string, label: string, value: string | undefined, key: "from" | "to") => (
    <div class="field">
      <label for={id}>{label}</label>
      <select id={id} value={value} onChange={(e) => setQuery({ [key]: e.currentTarget.value })}>
        {dates.map((d) => (
          <option key={d} value={d}>
            {formatDateTime(d)}
          </option>
        ))}
      </select>
    </div>
  );
  return (
    <section aria-labelledby="page-heading">
      <PageTitle title={`Compare analyses of ${name}`} />
      <AppNav name={name} current="compare" />
      <Show loaded={history} what="the analyses">
        {(h) =>
          h.length === 0 ? (
            <p>No analysis yet.</p>
          ) : (
            <form class="filters" onSubmit={(e) => e.preventDefault()}>
              {select("cmp-from", "Baseline analysis", from, "from")}
              {select("cmp-to", "Compared analysis", to, "to")}
            </form>
          )
        }
      </Show>
      {from && to ? (
        <Show loaded={comparison} what="the comparison">
          {(c) => (
            <>
              <p>
                From {formatDateTime(c.from.dateTime)} to {formatDateTime(c.to.dateTime)}.
              </p>
              <Changes
                title="Vulnerable packages"
                addedTotal={c.vulnerablePackages.addedTotal}
                removedTotal={c.vulnerablePackages.removedTotal}
                added={c.vulnerablePackages.added.map(
                  (p) => `${p.name}@${p.version} (${p.vulnerabilities.join(", ")})`,
                )}
                removed={c.vulnerablePackages.removed.map(
                  (p) => `${p.name}@${p.version} (${p.vulnerabilities.join(", ")})`,
                )}
              />
              <Changes
                title="Packages"
                addedTotal={c.packages.addedTotal}
                removedTotal={c.packages.removedTotal}
                added={c.packages.added.map((p) => `${p.name}@${p.version}`)}
                removed={c.packages.removed.map((p) => `${p.name}@${p.version}`)}
              />
              <Changes
                title="References"
                addedTotal={c.references.addedTotal}
                removedTotal={c.references.removedTotal}
                added={c.references.added.map(
                  (r) =>
                    `${r.source.fullName} → ${r.target.fullName} (${r.target.package} ${r.target.version})`,
                )}
                removed={c.references.removed.map(
                  (r) =>
                    `${r.source.fullName} → ${r.target.fullName} (${r.target.package} ${r.target.version})`,
                )}
              />
            </>
          )}
        </Show>
      ) : null}
    </section>
  );
}

/** The API sends the first 100 items of each list; the rest is counted, not listed. */
function Changes(props: {
  title: string;
  added: string[];
  addedTotal: number;
  removed: string[];
  removedTotal: number;
}) {
  const more = (shown: number, total: number) => (total > shown ? <p>… and {total - shown} more</p> : null);
  return (
    <section class="changes" aria-label={props.title}>
      <h2>
        {props.title}: {props.addedTotal} added, {props.removedTotal} removed
      </h2>
      <div class="columns">
        <div>
          <h3>Added</h3>
          {props.added.length === 0 ? (
            <p>none</p>
          ) : (
            <ul>
              {props.added.map((a) => (
                <li key={a}>{a}</li>
              ))}
            </ul>
          )}
          {more(props.added.length, props.addedTotal)}
        </div>
        <div>
          <h3>Removed</h3>
          {props.removed.length === 0 ? (
            <p>none</p>
          ) : (
            <ul>
              {props.removed.map((r) => (
                <li key={r}>{r}</li>
              ))}
            </ul>
          )}
          {more(props.removed.length, props.removedTotal)}
        </div>
      </div>
    </section>
  );
}
