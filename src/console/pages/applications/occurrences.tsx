import { UNKNOWN_VULNERABILITY_TYPE } from "../../../contracts/platform.ts";
import type { Advisory, CveInApplication, CvePackage, CveReference } from "../../../contracts/resources.ts";
import { ApiError } from "../../api.ts";
import { ErrorBox } from "../../ui/error-box.tsx";
import { PageTitle } from "../../ui/page-title.tsx";
import { useApiGet } from "../../ui/use-api.ts";
import { dateOfDay, intParam, useAppPage } from "./page-state.ts";
import { appPath } from "./paths.ts";
import {
  AppNav,
  AsOfPicker,
  formatDateTime,
  PagedTable,
  ScopeBadge,
  SeverityBadge,
  Show,
} from "./widgets.tsx";

const LIMIT = 20;
const REFERENCE_LIMIT = 50;

/** A span of affected versions as one readable phrase: ">= 2.13.0, < 2.15.0", "= 1.2.3", "all versions". */
function rangeText(r: Advisory["affected"][number]["ranges"][number]): string {
  if (r.version) return `= ${r.version}`;
  const parts = [
    r.introduced && r.introduced !== "0" ? `>= ${r.introduced}` : null,
    r.fixed ? `< ${r.fixed}` : r.lastAffected ? `<= ${r.lastAffected}` : null,
    r.limit ? `< ${r.limit} (limit)` : null,
  ].filter(Boolean);
  return parts.length === 0 ? "all versions" : parts.join(", ");
}

/** The advisory itself, as the imported records describe it. */
function AdvisoryFacts({ advisory }: { advisory: Advisory }) {
  return (
    <>
      <p class="advisory-summary">{advisory.summary || "No summary in the advisory."}</p>
      <dl class="pairs">
        <div>
          <dt>Severity</dt>
          <dd>
            <SeverityBadge severity={advisory.severity} />
          </dd>
        </div>
        <div>
          <dt>CVSS score</dt>
          <dd>{advisory.score ?? "unknown"}</dd>
        </div>
        <div>
          <dt>Aliases</dt>
          <dd>{advisory.aliases.join(", ") || "none"}</dd>
        </div>
        <div>
          <dt>Published</dt>
          <dd>{advisory.publishedAt ? formatDateTime(advisory.publishedAt) : "unknown"}</dd>
        </div>
      </dl>
      <div class="table-scroll">
        <table class="advisory-ranges">
          <caption>Affected packages and versions</caption>
          <thead>
            <tr>
              <th scope="col">Package</th>
              <th scope="col">Ecosystem</th>
              <th scope="col">Affected versions</th>
              <th scope="col">Fixed versions</th>
            </tr>
          </thead>
          <tbody>
            {advisory.affected.map((p) => (
              <tr key={`${p.ecosystem}:${p.name}`}>
                <th scope="row">{p.name}</th>
                <td>{p.ecosystem}</td>
                <td>{p.ranges.map(rangeText).join("; ")}</td>
                <td>{p.fixedVersions.join(", ") || "none"}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {advisory.references.length > 0 && (
        <>
          <h3>References</h3>
          <ul class="references">
            {advisory.references.map((r) => (
              <li key={r.url}>
                <span class="type">{r.type}</span>{" "}
                <a href={r.url} rel="noreferrer noopener" target="_blank">
                  {r.url}
                </a>
              </li>
            ))}
          </ul>
        </>
      )}
    </>
  );
}

const isUnknownVulnerability = (error: unknown) =>
  error instanceof ApiError && error.problem.type === UNKNOWN_VULNERABILITY_TYPE;

/**
 * Whether the analysis shown is affected, and when the application last was: an analysis that moved off
 * the affected versions says which analysis still had them (a link "as of" it).
 */
function AffectedStatus(props: { name: string; cve: string; status: CveInApplication }) {
  const { status, name, cve } = props;
  const shown = formatDateTime(status.analysis.dateTime);
  if (status.affectedPackageCount > 0) {
    return (
      <p class="cve-status affected">
        The analysis of {shown} uses {status.affectedPackageCount} affected package version
        {status.affectedPackageCount === 1 ? "" : "s"}.
      </p>
    );
  }
  const last = status.lastAffectedAnalysis;
  return (
    <p class="cve-status">
      The analysis of {shown} uses no version {cve} affects.{" "}
      {last ? (
        <>
          The last analysis that did:{" "}
          <a href={`${appPath(name, "cves", cve)}?date=${encodeURIComponent(last.dateTime)}`}>
            {formatDateTime(last.dateTime)}
          </a>
          .
        </>
      ) : (
        "No earlier analysis did either."
      )}
    </p>
  );
}

/**
 * A CVE's occurrences in an application: the advisory itself and whether the analysis is affected (else
 * the last analysis that was), the affected packages with their facts and referred external objects (the
 * occurrences operation, paged, "as of" a day), then the application objects referring to them (the
 * references operation). A CVE no imported advisory names is said to be unknown, never "affects none".
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
  const advisory = useApiGet<Advisory>(`/vulnerabilities/${encodeURIComponent(cve)}`);
  const status = useApiGet<CveInApplication>(base, { date });
  // Every operation about the CVE says so for an unknown one: said once, whichever answers first.
  const unknown = [advisory, status, occurrences, references]
    .map((loaded) => loaded.error)
    .find(isUnknownVulnerability);
  if (unknown !== undefined) {
    return (
      <section aria-labelledby="page-heading">
        <PageTitle title={`${cve} in ${name}`} />
        <AppNav name={name} current="CVEs" />
        <ErrorBox error={unknown} />
      </section>
    );
  }
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
      <h2>Advisory</h2>
      <Show loaded={advisory} what="the advisory">
        {(a) => <AdvisoryFacts advisory={a} />}
      </Show>
      <Show loaded={status} what="whether this analysis is affected">
        {(s) => <AffectedStatus name={name} cve={cve} status={s} />}
      </Show>
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
