import type { CvePackage, CveReference } from "../../../contracts/resources.ts";
import { PageTitle } from "../../ui/page-title.tsx";
import { useApiGet } from "../../ui/use-api.ts";
import { dateOfDay, intParam, useAppPage } from "./page-state.ts";
import { appPath } from "./paths.ts";
import { AppNav, AsOfPicker, formatDateTime, PagedTable, ScopeBadge } from "./widgets.tsx";

const LIMIT = 20;
const REFERENCE_LIMIT = 50;

/**
 * A CVE's occurrences in an application: the affected packages with their facts and referred external
 * objects (the occurrences operation, paged, "as of" a day), then the application objects referring to
 * them (the references operation).
 */
export function CveOccurrences() {
  const { params, name, query, setQuery, skip, onSkip } = useAppPage();
  const cve = params.id ?? "";
  // A shared link may ask for another page size (1..100).
  const limit = Math.min(100, Math.max(1, intParam(query.limit, LIMIT)));
  const refSkip = intParam(query.refSkip, 0);
  const date = dateOfDay(query.date);
  const base = `/applications/${encodeURIComponent(name)}/insights/cve/${encodeURIComponent(cve)}`;
  const occurrences = useApiGet<CvePackage[]>(`${base}/occurrences`, { limit, skip, date });
  const references = useApiGet<CveReference[]>(`${base}/references`, {
    limit: REFERENCE_LIMIT,
    skip: refSkip,
    date,
  });
  return (
    <section aria-labelledby="page-heading">
      <PageTitle title={`${cve} in ${name}`} />
      <AppNav name={name} current="CVEs" />
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <AsOfPicker
          value={query.date}
          onChange={(d) => setQuery({ date: d, skip: undefined, refSkip: undefined })}
        />
      </form>
      <h2>Affected packages</h2>
      <PagedTable
        loaded={occurrences}
        what="the occurrences"
        empty={<>{cve} affects none of the packages of this analysis.</>}
        caption={`Packages affected by ${cve}, with the external objects the application refers to`}
        tableClass="occurrences"
        headers={[
          "Package",
          "Version",
          "Scope",
          "Released",
          "Releases per year",
          "Safer closest version",
          "Safest version",
          "Referred external objects",
        ]}
        row={(p) => (
          <tr key={`${p.name}@${p.version}`}>
            <th scope="row">
              <a href={appPath(name, "packages", p.name)}>{p.name}</a>
            </th>
            <td>{p.version}</td>
            <td>
              <ScopeBadge scope={p.scope} />
            </td>
            <td>{p.releaseDate ? formatDateTime(p.releaseDate.dateTime).slice(0, 10) : "unknown"}</td>
            <td class="numeric">{p.releasesPerYear ?? "–"}</td>
            <td>{p.saferClosestVersion ?? "none"}</td>
            <td>{p.safestVersion ?? "none"}</td>
            <td>
              {p.objects.length === 0 ? (
                "none referred"
              ) : (
                <ul class="objects">
                  {p.objects.map((o) => (
                    <li key={o.id}>
                      <code>{o.fullName}</code> <span class="type">{o.type}</span>
                    </li>
                  ))}
                </ul>
              )}
            </td>
          </tr>
        )}
        pager={{ skip, limit, label: "packages", onSkip }}
      />
      <h2>Application objects referring to them</h2>
      <PagedTable
        loaded={references}
        what="the references"
        empty="No application object refers to the affected packages."
        caption="References from the application to the affected packages"
        tableClass="references"
        headers={["External object", "Package", "Referred to by", "Affected function?"]}
        row={(r) => (
          <tr key={`${r.version}:${r.target.id}<-${r.source.id}`}>
            <td>
              <code>{r.target.fullName}</code>
            </td>
            <td>
              {r.package} {r.version}
            </td>
            <td>
              <code>{r.source.fullName}</code> <span class="type">{r.source.type}</span>
            </td>
            <td>
              {r.reachesAffectedFunction === null
                ? "advisory names none"
                : r.reachesAffectedFunction
                  ? `yes: ${r.reachedFunctions.join(", ")}`
                  : "no"}
            </td>
          </tr>
        )}
        pager={{
          skip: refSkip,
          limit: REFERENCE_LIMIT,
          label: "references",
          onSkip: (s) => setQuery({ refSkip: String(s) }),
        }}
      />
    </section>
  );
}
