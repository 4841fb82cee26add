import { SEVERITIES } from "../../../contracts/platform.ts";
import type { CveInsight } from "../../../contracts/resources.ts";
import { PageTitle } from "../../ui/page-title.tsx";
import { useApiGet } from "../../ui/use-api.ts";
import { dateOfDay, useAppPage } from "./page-state.ts";
import { appPath } from "./paths.ts";
import { AppNav, AsOfPicker, PagedTable, SeverityBadge } from "./widgets.tsx";

const LIMIT = 50;

/** The CVEs affecting an application, most severe first, filtered by severity and "as of" a day. */
export function ApplicationCves() {
  const { name, query, setQuery, skip, onSkip } = useAppPage();
  const chosen = (query.severity ?? "")
    .split(",")
    .filter((s) => (SEVERITIES as readonly string[]).includes(s));
  const loaded = useApiGet<CveInsight[]>(`/applications/${encodeURIComponent(name)}/insights/cve`, {
    limit: LIMIT,
    skip,
    severity: chosen.length > 0 ? chosen.join(",") : undefined,
    date: dateOfDay(query.date),
  });
  const toggle = (severity: string, on: boolean) => {
    const next = on ? [...chosen, severity] : chosen.filter((s) => s !== severity);
    setQuery({ severity: next.join(","), skip: undefined });
  };
  const dateQuery = query.date ? `?date=${encodeURIComponent(query.date)}` : "";
  return (
    <section aria-labelledby="page-heading">
      <PageTitle title={`CVEs of ${name}`} />
      <AppNav name={name} current="CVEs" />
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <fieldset>
          <legend>Severity</legend>
          {SEVERITIES.map((s) => (
            <label key={s} class="check">
              <input
                type="checkbox"
                name="severity"
                value={s}
                checked={chosen.includes(s)}
                onChange={(e) => toggle(s, (e.currentTarget as HTMLInputElement).checked)}
              />
              {s}
            </label>
          ))}
        </fieldset>
        <AsOfPicker value={query.date} onChange={(date) => setQuery({ date, skip: undefined })} />
      </form>
      <PagedTable
        loaded={loaded}
        what="the CVEs"
        empty={<>No CVE affects this application{chosen.length > 0 ? " at these severities" : ""}.</>}
        caption="CVEs, most severe first"
        headers={["CVE", "Severity", "Score", "Affected packages", "Referring objects", "Summary"]}
        row={(c) => (
          <tr key={c.id}>
            <th scope="row">
              <a href={`${appPath(name, "cves", c.id)}${dateQuery}`}>{c.id}</a>
              {c.aliases.length > 0 ? " " : null}
              {c.aliases.length > 0 ? <span class="aliases">{c.aliases.join(", ")}</span> : null}
            </th>
            <td>
              <SeverityBadge severity={c.severity} />
            </td>
            <td class="numeric">{c.score ?? "–"}</td>
            <td class="numeric">{c.affectedPackageCount}</td>
            <td class="numeric">{c.referringObjectCount}</td>
            <td>{c.summary}</td>
          </tr>
        )}
        pager={{ skip, limit: LIMIT, label: "CVEs", onSkip }}
      />
    </section>
  );
}
