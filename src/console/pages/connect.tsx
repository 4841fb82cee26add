import { useState } from "preact/hooks";
import type { CimdClient } from "../../contracts/admin.ts";
import { ApiError, apiSend } from "../api.ts";
import { useSession } from "../session.ts";
import { CodeBlock } from "../ui/code-block.tsx";
import { ErrorBox } from "../ui/error-box.tsx";
import { PageTitle } from "../ui/page-title.tsx";
import { useApiGet } from "../ui/use-api.ts";
import {
  claudeCodeCommand,
  genericSettings,
  type McpServer,
  mcpServers,
  vscodeMcpJson,
} from "./connect-snippets.ts";

/** The AI clients with a CIMD preset (src/idp/cimd/presets.ts) and their client ID metadata document. */
const CLIENTS = [
  {
    id: "claude-code",
    label: "Claude Code",
    clientId: "https://claude.ai/oauth/claude-code-client-metadata",
    how: "Run this command, then in Claude Code run /mcp, select the server, choose Authenticate and sign in in the browser.",
    snippet: claudeCodeCommand,
    snippetLabel: "command",
  },
  {
    id: "vscode",
    label: "VS Code",
    clientId: "https://vscode.dev/oauth/client-metadata.json",
    how: "Put this entry in .vscode/mcp.json, start the server from mcp.json, click Allow and sign in in the browser.",
    snippet: vscodeMcpJson,
    snippetLabel: "mcp.json entry",
  },
  {
    id: "other",
    label: "Other MCP client",
    clientId: undefined,
    how: "Give the client the server URL: it discovers the sign-in from the 401 challenge. A client without a client ID metadata document needs a CIMD policy added by hand or dynamic client registration.",
    snippet: genericSettings,
    snippetLabel: "settings",
  },
] as const;

type ClientEntry = (typeof CLIENTS)[number];

/** A CIMD policy as listed by GET /rest/admin/cimd-policies (only the fields read here, each maybe absent). */
type PolicySummary = Partial<Pick<CimdClient, "client" | "clientId" | "preset" | "enabled" | "linked">>;

/** The client's policy: "missing", "usable", or "inactive" (disabled, or its profile not linked). */
function policyFor(
  policies: PolicySummary[] | undefined,
  client: ClientEntry,
): "missing" | "usable" | "inactive" | undefined {
  if (!policies || !client.clientId) return undefined;
  const found = policies.find(
    (p) => p.client === client.id || p.preset === client.id || p.clientId === client.clientId,
  );
  if (!found) return "missing";
  return found.enabled === false || found.linked === false ? "inactive" : "usable";
}

function PolicyState(props: { client: ClientEntry; policies: ReturnType<typeof useApiGet<unknown>> }) {
  const session = useSession();
  const [creating, setCreating] = useState(false);
  const [error, setError] = useState<unknown>();
  const { client } = props;
  if (!client.clientId) return null;
  if (!session.isAdmin) {
    return <p>Whether this client may sign in is set by an administrator (CIMD client policies).</p>;
  }
  const { data, error: listError } = props.policies;
  if (listError) {
    const missing = listError instanceof ApiError && listError.status === 404;
    return (
      <p>
        {missing
          ? "CIMD policies cannot be listed by this gateway version."
          : "CIMD policies could not be read."}
      </p>
    );
  }
  const list = Array.isArray(data)
    ? data
    : ((data as { items?: PolicySummary[] } | undefined)?.items ?? undefined);
  const exists = policyFor(list as PolicySummary[] | undefined, client);
  if (exists === undefined) return <p>Checking the CIMD policy…</p>;
  const create = async () => {
    setCreating(true);
    setError(undefined);
    try {
      await apiSend("POST", "/admin/cimd-policies", { preset: client.id });
      props.policies.reload();
    } catch (e) {
      setError(e);
    } finally {
      setCreating(false);
    }
  };
  return (
    <div>
      {exists === "usable" ? (
        <p>
          <span class="badge state-up">CIMD policy exists</span> {client.label} can sign in.
        </p>
      ) : exists === "inactive" ? (
        <p>
          <span class="badge verdict-warn">CIMD policy inactive</span> {client.label}'s policy is disabled or
          not linked to its profile: fix it on the CIMD client policies page.
        </p>
      ) : (
        <p>
          <span class="badge state-down">No CIMD policy</span> {client.label} cannot sign in until one exists.{" "}
          <button type="button" onClick={create} disabled={creating}>
            {creating ? "Creating…" : `Create the ${client.label} policy from its preset`}
          </button>
        </p>
      )}
      {error !== undefined && <ErrorBox error={error} />}
    </div>
  );
}

function ClientSection(props: {
  client: ClientEntry;
  servers: McpServer[];
  policies: ReturnType<typeof useApiGet<unknown>>;
}) {
  const { client } = props;
  return (
    <section aria-labelledby={`client-${client.id}`}>
      <h2 id={`client-${client.id}`}>{client.label}</h2>
      <p>{client.how}</p>
      <PolicyState client={client} policies={props.policies} />
      {props.servers.map((server) => (
        <div key={server.kind}>
          <h3>
            {server.kind === "analysis" ? "Analysis" : "Gatekeeper"} MCP server <code>{server.url}</code>
          </h3>
          <CodeBlock
            code={client.snippet(server)}
            label={`${client.label} ${client.snippetLabel} for ${server.name}`}
          />
        </div>
      ))}
    </section>
  );
}

export function ConnectPage() {
  const session = useSession();
  const servers = mcpServers(session.baseUrl);
  // Only admins may read CIMD policies (the REST API refuses others): viewers do not ask.
  const policies = useApiGet<unknown>(session.isAdmin ? "/admin/cimd-policies" : undefined);
  return (
    <section>
      <PageTitle title="Connect an AI client" />
      <p>
        This deployment's MCP servers are reached through the gateway at <code>{session.baseUrl}</code>. Each
        AI client signs in with your platform account the first time it connects.
      </p>
      {CLIENTS.map((client) => (
        <ClientSection key={client.id} client={client} servers={servers} policies={policies} />
      ))}
    </section>
  );
}
