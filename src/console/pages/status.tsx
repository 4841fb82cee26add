import { useState } from "preact/hooks";
/** GET /rest/status and POST /rest/admin/doctor, as src/contracts/admin.ts declares them. */
import type { DoctorAnswer, PlatformStatus } from "../../contracts/admin.ts";
import { apiSend } from "../api.ts";
import { useSession } from "../session.ts";
import { ErrorBox } from "../ui/error-box.tsx";
import { PageTitle } from "../ui/page-title.tsx";
import { ResourceTable } from "../ui/resource-table.tsx";
import { DataTable } from "../ui/table.tsx";
import { mapLoaded, useApiGet } from "../ui/use-api.ts";

const VERDICT_LABEL = { pass: "Pass", fail: "Fail", warn: "Warning", "n/a": "Not applicable" } as const;

function Doctor() {
  const [state, setState] = useState<{ running: boolean; answer?: DoctorAnswer; error?: unknown }>({
    running: false,
  });
  const run = async () => {
    setState({ running: true });
    try {
      setState({ running: false, answer: await apiSend<DoctorAnswer>("POST", "/admin/doctor") });
    } catch (error) {
      setState({ running: false, error });
    }
  };
  const checks = state.answer?.checks ?? [];
  const failed = checks.filter((c) => c.verdict === "fail").length;
  return (
    <section aria-labelledby="doctor-heading">
      <h2 id="doctor-heading">Doctor checks</h2>
      <p>
        The checks of <code>imaging doctor</code>, run by the platform against this deployment.
      </p>
      <button type="button" onClick={run} disabled={state.running}>
        {state.running ? "Running the checks…" : "Run the checks"}
      </button>
      {state.error !== undefined && <ErrorBox error={state.error} />}
      {state.answer && (
        <>
          <p role="status">
            {checks.length} checks: {checks.filter((c) => c.verdict === "pass").length} passed, {failed}{" "}
            failed, {checks.filter((c) => c.verdict === "warn").length} warnings.
          </p>
          <DataTable
            caption="Doctor checks"
            rows={checks}
            rowKey={(c) => c.id}
            columns={[
              {
                header: "Verdict",
                cell: (c) => (
                  <span class={`verdict verdict-${c.verdict === "n/a" ? "na" : c.verdict}`}>
                    {VERDICT_LABEL[c.verdict]}
                  </span>
                ),
              },
              {
                header: "Check",
                cell: (c) => (
                  <>
                    <strong>{c.title}</strong>
                    <br />
                    <code>{c.id}</code>
                  </>
                ),
              },
              { header: "Observed", cell: (c) => c.detail },
              { header: "Fix", cell: (c) => (c.verdict === "pass" ? "" : (c.fix ?? "")) },
            ]}
          />
        </>
      )}
    </section>
  );
}

export function StatusPage() {
  const session = useSession();
  const status = useApiGet<PlatformStatus>("/status");
  const { data } = status;
  return (
    <section>
      <PageTitle title="Status" />
      <dl class="facts">
        <dt>Version</dt>
        <dd>{data?.version ?? session.version}</dd>
        <dt>base_url</dt>
        <dd>
          <code>{data?.baseUrl ?? session.baseUrl}</code>
        </dd>
        <dt>Identity provider</dt>
        <dd>{session.idp === "keycloak" ? "Keycloak" : "Embedded"}</dd>
      </dl>
      <h2>Parts</h2>
      <ResourceTable
        loaded={mapLoaded(status, (answer) => answer.parts)}
        what="the status"
        caption="Health of each part"
        rowKey={(p) => p.id}
        columns={[
          { header: "Part", cell: (p) => p.name },
          {
            header: "State",
            cell: (p) => (
              <span class={`verdict state-${p.state.toLowerCase()}`}>{p.state === "UP" ? "Up" : "Down"}</span>
            ),
          },
          { header: "Observed", cell: (p) => p.detail },
        ]}
      />
      {data && (
        <button type="button" class="secondary" onClick={status.reload}>
          Refresh
        </button>
      )}
      {session.isAdmin && <Doctor />}
    </section>
  );
}
