import type { ApplicationSummary } from "../../../contracts/resources.ts";
import { PageTitle } from "../../ui/page-title.tsx";
import { useApiGet } from "../../ui/use-api.ts";
import { intParam, useQueryState } from "./page-state.ts";
import { appPath } from "./paths.ts";
import { formatDateTime, PagedTable } from "./widgets.tsx";

const LIMIT = 50;

/** The applications the signed-in user may read (the REST API filters by the user's grants). */
export function ApplicationsList() {
  const [query, setQuery] = useQueryState();
  const skip = intParam(query.skip, 0);
  const loaded = useApiGet<ApplicationSummary[]>("/applications", { limit: LIMIT, skip });
  return (
    <section aria-labelledby="page-heading">
      <PageTitle title={"Applications"} />
      <PagedTable
        loaded={loaded}
        what="the applications"
        empty="No application is visible to you. An administrator grants applications to users."
        caption="Applications you may read"
        headers={["Name", "Description", "Analyses", "Latest analysis"]}
        row={(a) => (
          <tr key={a.name}>
            <th scope="row">
              <a href={appPath(a.name)}>{a.name}</a>
              {a.demo ? " " : null}
              {a.demo ? <span class="tag">demo</span> : null}
            </th>
            <td>{a.description}</td>
            <td class="numeric">{a.analysisCount}</td>
            <td>{a.latestAnalysis ? formatDateTime(a.latestAnalysis.dateTime) : "never analyzed"}</td>
          </tr>
        )}
        pager={{
          skip,
          limit: LIMIT,
          label: "applications",
          onSkip: (s) => setQuery({ skip: String(s) }),
        }}
      />
    </section>
  );
}
