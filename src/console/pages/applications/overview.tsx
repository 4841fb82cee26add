import { useRoute } from "preact-iso";
import type {
  AnalysisHistoryEntry,
  ApplicationDetail,
  GateEvaluation,
  GateHistoryEntry,
} from "../../../contracts/resources.ts";
import { PageTitle } from "../../ui/page-title.tsx";
import { useApiGet } from "../../ui/use-api.ts";
import { appPath } from "./paths.ts";
import { SeverityChart, SeverityTable } from "./severity-chart.tsx";
import { AppNav, formatDateTime, SeverityBadge, Show } from "./widgets.tsx";

/** One application: counts, analysis timeline, severity chart and quality-gate verdicts. */
export function ApplicationOverview() {
  const { params } = useRoute();
  const name = params.name ?? "";
  const detail = useApiGet<ApplicationDetail>(`/applications/${encodeURIComponent(name)}`);
  const history = useApiGet<AnalysisHistoryEntry[]>(`/applications/${encodeURIComponent(name)}/analyses`, {
    limit: 1000,
  });
  const gates = useApiGet<GateHistoryEntry[]>(`/applications/${encodeURIComponent(name)}/gates/history`, {
    limit: 1000,
  });
  const evaluation = useApiGet<GateEvaluation>(`/applications/${encodeURIComponent(name)}/gates/evaluation`);
  return (
    <section aria-labelledby="page-heading">
      <PageTitle title={`Application ${name}`} />
      <AppNav name={name} current="overview" />
      <Show loaded={detail} what={`application ${name}`}>
        {(app) => (
          <>
            {app.description ? <p>{app.description}</p> : null}
            <h2>Latest analysis</h2>
            <p>{app.latestAnalysis ? formatDateTime(app.latestAnalysis.dateTime) : "never analyzed"}</p>
            <dl class="pairs counts">
              <div>
                <dt>Packages</dt>
                <dd>{app.counts.packages}</dd>
              </div>
              <div>
                <dt>Vulnerable packages</dt>
                <dd>
                  <a href={`${appPath(name, "packages")}?vulnerable=true`}>{app.counts.vulnerablePackages}</a>
                </dd>
              </div>
              <div>
                <dt>CVEs</dt>
                <dd>
                  <a href={appPath(name, "cves")}>{app.counts.vulnerabilities}</a>
                </dd>
              </div>
              <div>
                <dt>External objects</dt>
                <dd>{app.counts.externalObjects}</dd>
              </div>
              <div>
                <dt>References</dt>
                <dd>{app.counts.references}</dd>
              </div>
            </dl>
          </>
        )}
      </Show>

      <h2 id="gate-title">Quality gate</h2>
      <Show loaded={evaluation} what="the quality gate verdict">
        {(e) => (
          <div>
            <p>
              Verdict on the analysis of {formatDateTime(e.analysis.dateTime)}:{" "}
              <strong class={`verdict verdict-${e.verdict}`}>{e.verdict === "pass" ? "PASS" : "FAIL"}</strong>
            </p>
            <ul class="rules">
              {e.rules.map((r) => (
                <li key={r.id}>
                  <span class={`verdict verdict-${r.passed ? "pass" : "fail"}`}>
                    {r.passed ? "pass" : "fail"}
                  </span>{" "}
                  {r.name}
                  {r.findings.length > 0 ? (
                    <ul>
                      {r.findings.map((f) => (
                        <li key={`${f.package}@${f.version}:${f.cve ?? ""}`}>
                          {f.severity ? <SeverityBadge severity={f.severity} /> : null} {f.detail}
                        </li>
                      ))}
                      {r.findingsTotal > r.findings.length ? (
                        <li>… and {r.findingsTotal - r.findings.length} more findings</li>
                      ) : null}
                    </ul>
                  ) : null}
                </li>
              ))}
            </ul>
          </div>
        )}
      </Show>

      <h2>Vulnerable packages by severity</h2>
      <Show loaded={history} what="the analysis history">
        {(h) =>
          h.length === 0 ? (
            <p>No analysis yet.</p>
          ) : (
            <>
              <SeverityChart history={h} />
              <SeverityTable history={h} />
            </>
          )
        }
      </Show>

      <h2>Analysis history</h2>
      <Show loaded={history} what="the analysis history">
        {(h) => (
          <ol class="timeline" reversed>
            {[...h].reverse().map((entry, i, all) => {
              const at = entry.analysis.dateTime;
              const verdict = gates.data?.find((g) => g.analysis.dateTime === at);
              const previous = all[i + 1];
              return (
                <li key={at}>
                  <time dateTime={at}>{formatDateTime(at)}</time>
                  {verdict ? (
                    <span class={`verdict verdict-${verdict.verdict}`}>
                      gate {verdict.verdict}
                      {verdict.failedRules.length > 0 ? ` (${verdict.failedRules.join(", ")})` : ""}
                    </span>
                  ) : null}
                  <span>
                    {entry.counts.packages} packages, {entry.counts.vulnerablePackages} vulnerable,{" "}
                    {entry.counts.vulnerabilities} CVEs, {entry.counts.references} references
                  </span>
                  <span class="links">
                    <a href={`${appPath(name, "cves")}?date=${encodeURIComponent(at)}`}>CVEs then</a>
                    {previous ? (
                      <a
                        href={`${appPath(name, "compare")}?from=${encodeURIComponent(previous.analysis.dateTime)}&to=${encodeURIComponent(at)}`}
                      >
                        Changes since the previous analysis
                      </a>
                    ) : null}
                  </span>
                </li>
              );
            })}
          </ol>
        )}
      </Show>
    </section>
  );
}
