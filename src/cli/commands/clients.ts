import type { Command } from "commander";
import { REGISTRATION_LIMITS } from "../../idp/registration/policy.ts";
import {
  findRegisteredClient,
  listRegisteredClients,
  type RegisteredClient,
  revokeRegisteredClient,
} from "../../store/registered-clients.ts";
import { settingsFrom, withStore } from "../context.ts";
import { CliError, emit, table } from "../output.ts";

const when = (date: Date | null) => (date ? date.toISOString() : "never");
const expiresOf = (client: RegisteredClient) =>
  client.lastUsedAt
    ? null
    : new Date(client.createdAt.getTime() + REGISTRATION_LIMITS.unusedClientTtlSeconds * 1000);

const view = (client: RegisteredClient) => ({
  clientId: client.clientId,
  clientName: client.clientName,
  redirectUris: client.redirectUris,
  registeredFrom: client.sourceAddress,
  createdAt: client.createdAt.toISOString(),
  lastUsedAt: client.lastUsedAt?.toISOString() ?? null,
  expiresAt: expiresOf(client)?.toISOString() ?? null,
});

/** The embedded provider keeps registered clients in the store; Keycloak keeps its own. */
function refuseKeycloak(options: { dataDir?: string; config?: string }): void {
  if (settingsFrom(options).idp === "keycloak") {
    throw new CliError(
      "with IDP=keycloak, registered clients live in Keycloak: see Clients in its admin console (realm of KEYCLOAK_REALM)",
    );
  }
}

export function registerClients(program: Command): void {
  const clients = program
    .command("clients")
    .description(
      "Clients registered dynamically (DYNAMIC_CLIENT_REGISTRATION) with the embedded identity provider",
    );
  const common = (c: Command) =>
    c
      .option("--data-dir <dir>", "data directory (default: IMAGING_DATA_DIR, else ./data)")
      .option("--config <file>", "JSON config file")
      .option("--json", "print JSON");

  common(clients.command("list").description("List registered clients")).action(
    async (options: { json?: boolean; dataDir?: string; config?: string }) => {
      refuseKeycloak(options);
      const list = await withStore(options, (store) => listRegisteredClients(store.db));
      emit(Boolean(options.json), list.map(view), () =>
        list.length === 0
          ? "No registered client."
          : table(
              ["CLIENT ID", "NAME", "REDIRECT URIS", "CREATED", "LAST USED"],
              list.map((c) => [
                c.clientId,
                c.clientName ?? "-",
                c.redirectUris.join(" "),
                c.createdAt.toISOString(),
                c.lastUsedAt ? c.lastUsedAt.toISOString() : `never (expires ${when(expiresOf(c))})`,
              ]),
            ),
      );
    },
  );

  common(clients.command("show").description("Show one registered client").argument("<client-id>")).action(
    async (clientId: string, options: { json?: boolean; dataDir?: string; config?: string }) => {
      refuseKeycloak(options);
      const client = await withStore(options, (store) => findRegisteredClient(store.db, clientId));
      if (!client) throw new CliError(`No registered client '${clientId}' (see: imaging clients list)`);
      const shown = view(client);
      emit(Boolean(options.json), shown, () =>
        [
          `Client ID:      ${shown.clientId}`,
          `Name:           ${shown.clientName ?? "-"} (unverified: chosen by the client)`,
          `Redirect URIs:  ${shown.redirectUris.join("\n                ")}`,
          `Registered from ${shown.registeredFrom} at ${shown.createdAt}`,
          `Last used:      ${shown.lastUsedAt ?? "never"}`,
          ...(shown.expiresAt
            ? [`Expires:        ${shown.expiresAt} unless a sign-in completes before`]
            : []),
        ].join("\n"),
      );
    },
  );

  common(
    clients
      .command("revoke")
      .description("Delete a registered client: its sign-ins and refresh tokens end at once")
      .argument("<client-id>"),
  ).action(async (clientId: string, options: { json?: boolean; dataDir?: string; config?: string }) => {
    refuseKeycloak(options);
    const found = await withStore(options, (store) => revokeRegisteredClient(store.db, clientId));
    if (!found) throw new CliError(`No registered client '${clientId}' (see: imaging clients list)`);
    emit(
      Boolean(options.json),
      { clientId, revoked: true },
      () =>
        `Client ${clientId} revoked: its refresh tokens and codes no longer work, its access tokens stop at their next use through the gateway's token exchange`,
    );
  });
}
