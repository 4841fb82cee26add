import { useState } from "preact/hooks";
import type { CimdClient } from "../../contracts/admin.ts";
import { apiSend } from "../api.ts";
import { ErrorBox } from "../ui/error-box.tsx";
import { type FieldError, FormField, listOf, TextField } from "../ui/form-field.tsx";
import { PageTitle } from "../ui/page-title.tsx";
import { ResourceTable } from "../ui/resource-table.tsx";
import { StatusLine } from "../ui/status-line.tsx";
import { useApiGet } from "../ui/use-api.ts";
import { useChange, useTextInput } from "../ui/use-change.tsx";

/** GET /rest/admin/cimd-policies: the CimdClient shape of src/contracts/admin.ts. */
export type CimdClientJson = CimdClient;

interface Preset {
  id: string;
  label: string;
  clientId: string;
  trustedDomains: string[];
  policyDomains: string[];
}

const onOff = (value: boolean) => (value ? "ON" : "OFF");

/** The error box for a refusal no field shows inline. */
function OtherError(props: { error: unknown; fieldError: FieldError | undefined; fields: string[] }) {
  if (props.error === undefined) return null;
  if (props.fieldError && props.fields.includes(props.fieldError.field)) return null;
  return <ErrorBox error={props.error} />;
}

function CreateForm(props: { presets: Preset[]; onCreated: (client: string) => void }) {
  const [preset, setPreset] = useState(props.presets[0]?.id ?? "");
  const change = useChange();
  const client = useTextInput(change, "client");
  const clientId = useTextInput(change, "clientId");
  const trusted = useTextInput(change, "trustedDomains");
  const policyDomains = useTextInput(change, "policyDomains");
  const [http, setHttp] = useState(false);
  const byHand = preset === "";
  const submit = async (event: Event) => {
    event.preventDefault();
    const body: Record<string, unknown> = byHand
      ? {
          client: client.value,
          clientId: clientId.value,
          ...(trusted.value.trim() ? { trustedDomains: listOf(trusted.value) } : {}),
          ...(policyDomains.value.trim() ? { policyDomains: listOf(policyDomains.value) } : {}),
          ...(http ? { http: true } : {}),
        }
      : { preset, ...(client.value.trim() ? { client: client.value } : {}), ...(http ? { http: true } : {}) };
    let created = "";
    const ok = await change.succeeds(async () => {
      created = (await apiSend<CimdClientJson>("POST", "/admin/cimd-policies", body)).client;
    });
    if (ok) {
      for (const input of [client, clientId, trusted, policyDomains]) input.onValue("");
      setHttp(false);
      props.onCreated(created);
    }
  };
  return (
    <form class="admin-card" onSubmit={submit} aria-labelledby="create-heading" noValidate>
      <h2 id="create-heading">Create a CIMD client policy</h2>
      <FormField id="cimd-preset" label="From" error={change.errorFor("preset")}>
        {(a) => (
          <select {...a} value={preset} onChange={(e) => setPreset((e.target as HTMLSelectElement).value)}>
            {props.presets.map((p) => (
              <option key={p.id} value={p.id}>
                Preset: {p.label} ({p.clientId})
              </option>
            ))}
            <option value="">By hand</option>
          </select>
        )}
      </FormField>
      <TextField
        id="cimd-client"
        label="Client name"
        hint={
          byHand
            ? "Short name: the pair is cimd-profile-NAME and cimd-policy-NAME"
            : "Optional: the preset's name when empty"
        }
        {...client}
      />
      {byHand && (
        <>
          <TextField
            id="cimd-client-id"
            label="client_id URL"
            hint="The client's metadata document, e.g. https://example.org/oauth/client-metadata.json"
            type="url"
            {...clientId}
          />
          <TextField
            id="cimd-trusted"
            label="Profile trusted domains"
            hint="Comma-separated; default: the client_id's host, localhost, 127.0.0.1"
            {...trusted}
          />
          <TextField
            id="cimd-policy-domains"
            label="Policy trusted domains"
            hint="Comma-separated; default: the client_id's host"
            {...policyDomains}
          />
        </>
      )}
      <div class="checkbox-field">
        <input
          id="cimd-http"
          type="checkbox"
          checked={http}
          onChange={(e) => setHttp((e.target as HTMLInputElement).checked)}
        />
        <label for="cimd-http">
          HTTP variant (Allow http scheme ON, URI schemes https and http): development only
        </label>
      </div>
      <OtherError
        error={change.error}
        fieldError={change.fieldError}
        fields={
          byHand ? ["client", "clientId", "trustedDomains", "policyDomains", "preset"] : ["client", "preset"]
        }
      />
      <button type="submit" disabled={change.busy}>
        {change.busy ? "Creating…" : "Create"}
      </button>
    </form>
  );
}

function EditForm(props: { client: CimdClientJson; onSaved: () => void }) {
  const { client } = props;
  const change = useChange();
  const clientId = useTextInput(change, "clientId", client.clientId ?? "");
  const trusted = useTextInput(change, "trustedDomains", client.profile?.trustedDomains.join(", ") ?? "");
  const policyDomains = useTextInput(change, "policyDomains", client.policy?.trustedDomains.join(", ") ?? "");
  const [http, setHttp] = useState(client.variant === "http");
  const [enabled, setEnabled] = useState(client.enabled);
  const [sameDomain, setSameDomain] = useState(client.profile?.restrictSameDomain ?? false);
  const [confidential, setConfidential] = useState(client.profile?.onlyAllowConfidentialClient ?? false);
  const prefix = `edit-${client.client}`;
  const submit = async (event: Event) => {
    event.preventDefault();
    const ok = await change.succeeds(() =>
      apiSend("PATCH", `/admin/cimd-policies/${encodeURIComponent(client.client)}`, {
        ...(clientId.value !== (client.clientId ?? "") ? { clientId: clientId.value } : {}),
        trustedDomains: listOf(trusted.value),
        policyDomains: listOf(policyDomains.value),
        http,
        enabled,
        restrictSameDomain: sameDomain,
        onlyAllowConfidentialClient: confidential,
      }),
    );
    if (ok) props.onSaved();
  };
  const checkbox = (id: string, label: string, checked: boolean, set: (v: boolean) => void) => (
    <div class="checkbox-field">
      <input
        id={`${prefix}-${id}`}
        type="checkbox"
        checked={checked}
        onChange={(e) => set((e.target as HTMLInputElement).checked)}
      />
      <label for={`${prefix}-${id}`}>{label}</label>
    </div>
  );
  return (
    <form onSubmit={submit} aria-label={`Edit ${client.client}`} noValidate>
      <TextField id={`${prefix}-client-id`} label="client_id URL" type="url" {...clientId} />
      <TextField
        id={`${prefix}-trusted`}
        label="Profile trusted domains"
        hint="Comma-separated: where the document is fetched from and the hosts its URLs may use"
        {...trusted}
      />
      <TextField
        id={`${prefix}-policy-domains`}
        label="Policy trusted domains"
        hint="Comma-separated: the client_id hosts the policy applies to"
        {...policyDomains}
      />
      {checkbox("http", "HTTP variant (development only)", http, setHttp)}
      {checkbox("enabled", "Policy enabled", enabled, setEnabled)}
      {checkbox("same-domain", "Restrict same domain", sameDomain, setSameDomain)}
      {checkbox("confidential", "Only Allow Confidential Client", confidential, setConfidential)}
      <OtherError
        error={change.error}
        fieldError={change.fieldError}
        fields={["clientId", "trustedDomains", "policyDomains"]}
      />
      <button type="submit" disabled={change.busy}>
        {change.busy ? "Saving…" : `Save ${client.client}`}
      </button>
    </form>
  );
}

function ClientCard(props: { client: CimdClientJson; onChanged: () => void }) {
  const { client } = props;
  const [editing, setEditing] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const change = useChange();
  const path = `/admin/cimd-policies/${encodeURIComponent(client.client)}`;
  const act = async (work: () => Promise<unknown>) => {
    if (await change.succeeds(work)) props.onChanged();
  };
  return (
    <section class="admin-card" aria-labelledby={`cimd-${client.client}`}>
      <h3 id={`cimd-${client.client}`}>{client.client}</h3>
      <dl class="facts">
        <dt>client_id</dt>
        <dd>{client.clientId ?? "(not recorded: made outside imaging cimd)"}</dd>
        <dt>Variant</dt>
        <dd>{client.variant === "http" ? "HTTP (development only)" : "HTTPS"}</dd>
        <dt>Profile {client.profile?.name ?? "(missing)"}</dt>
        <dd>
          {client.profile
            ? `Allow http scheme ${onOff(client.profile.allowHttpScheme)}; Restrict same domain ${onOff(
                client.profile.restrictSameDomain,
              )}; Only Allow Confidential Client ${onOff(client.profile.onlyAllowConfidentialClient)}; trusted domains ${
                client.profile.trustedDomains.join(", ") || "(none)"
              }`
            : "missing"}
        </dd>
        <dt>Policy {client.policy?.name ?? "(missing)"}</dt>
        <dd>
          {client.policy
            ? `URI schemes ${client.policy.uriSchemes.join(", ")}; trusted domains ${
                client.policy.trustedDomains.join(", ") || "(none)"
              }; associated profiles ${client.policy.profiles.join(", ") || "(none)"}; ${
                client.policy.enabled ? "enabled" : "disabled"
              }`
            : "missing"}
        </dd>
      </dl>
      {client.problems.length > 0 && (
        <div>
          <h4>Problems (sign-in fails)</h4>
          <ul>
            {client.problems.map((p) => (
              <li key={p}>{p}</li>
            ))}
          </ul>
        </div>
      )}
      {client.notes.length > 0 && (
        <div>
          <h4>Notes</h4>
          <ul>
            {client.notes.map((n) => (
              <li key={n}>{n}</li>
            ))}
          </ul>
        </div>
      )}
      <div class="actions">
        <button
          type="button"
          class="secondary"
          disabled={change.busy}
          onClick={() => act(() => apiSend("POST", `${path}/${client.linked ? "unlink" : "link"}`))}
        >
          {client.linked ? `Unlink ${client.client}` : `Link ${client.client}`}
        </button>
        <button type="button" class="secondary" aria-expanded={editing} onClick={() => setEditing(!editing)}>
          {editing ? "Close the editor" : `Edit ${client.client}`}
        </button>
        {confirming ? (
          <>
            <button type="button" disabled={change.busy} onClick={() => act(() => apiSend("DELETE", path))}>
              Confirm: remove {client.client}
            </button>
            <button type="button" class="secondary" onClick={() => setConfirming(false)}>
              Keep it
            </button>
          </>
        ) : (
          <button type="button" class="secondary" onClick={() => setConfirming(true)}>
            Remove {client.client}
          </button>
        )}
      </div>
      {change.error !== undefined && <ErrorBox error={change.error} />}
      {editing && (
        <EditForm
          client={client}
          onSaved={() => {
            setEditing(false);
            props.onChanged();
          }}
        />
      )}
    </section>
  );
}

/** CIMD client policies (admins): what `imaging cimd` does, in the browser. */
export function CimdPoliciesPage() {
  const clients = useApiGet<CimdClientJson[]>("/admin/cimd-policies");
  const presets = useApiGet<Preset[]>("/admin/cimd-presets");
  const [announce, setAnnounce] = useState("");
  return (
    <section>
      <PageTitle title="CIMD client policies" />
      <p>
        Each AI client that signs in with a client ID metadata document needs a profile (the rules) and a
        policy (which client_ids they apply to), linked by the policy's associated profiles.
      </p>
      <StatusLine text={announce} />
      <ResourceTable
        loaded={clients}
        what="CIMD client policies"
        caption="CIMD clients"
        rowKey={(c) => c.client}
        empty="No CIMD client yet: create one below."
        columns={[
          { header: "Client", cell: (c) => <a href={`#cimd-${c.client}`}>{c.client}</a> },
          { header: "client_id", cell: (c) => c.clientId ?? "(not recorded)" },
          { header: "Variant", cell: (c) => c.variant.toUpperCase() },
          { header: "Linked", cell: (c) => (c.linked ? "yes" : "no") },
          { header: "Enabled", cell: (c) => (c.enabled ? "yes" : "no") },
          { header: "Problems", cell: (c) => String(c.problems.length), numeric: true },
        ]}
      />
      {clients.data?.map((c) => (
        <ClientCard
          key={`${c.client}-${JSON.stringify(c)}`}
          client={c}
          onChanged={() => {
            setAnnounce(`${c.client} updated`);
            clients.reload();
          }}
        />
      ))}
      {presets.data && (
        <CreateForm
          presets={presets.data}
          onCreated={(name) => {
            setAnnounce(`${name} created and linked`);
            clients.reload();
          }}
        />
      )}
    </section>
  );
}
