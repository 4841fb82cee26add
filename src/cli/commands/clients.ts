import type { Command } from "commander";
import {
  findKeycloakRegisteredClient,
  listKeycloakRegisteredClients,
  revokeKeycloakRegisteredClient,
} from "../../idp/keycloak/registered-clients.ts";
import { REGISTRATION_LIMITS } from "../../idp/registration/policy.ts";
import {
  findRegisteredClient,
  listRegisteredClients,
  type RegisteredClient,
  revokeRegisteredClient,
} from "../../store/registered-clients.ts";
import { settingsFrom, withStore } from "../context.ts";
import { withKeycloakAdmin } from "../idp-context.ts";
import { CliError, columnsTable, emit } from "../output.ts";

const when = (date: Date | null) => (date ? date.toISOString() : "never");
/** What both identity providers know of a registered client. */
type Listed = Pick<
  RegisteredClient,
  "clientId" | "clientName" | "redirectUris" | "createdAt" | "lastUsedAt"
> & {
  sourceAddress: string | null;
};

const expiresOf = (client: Listed) =>
  client.lastUsedAt
    ? null
    : new Date(client.createdAt.getTime() + REGISTRATION_LIMITS.unusedClientTtlSeconds * 1000);

const view = (client: Listed) => ({
  clientId: client.clientId,
  clientName: client.clientName,
  redirectUris: client.redirectUris,
  registeredFrom: client.sourceAddress,
  createdAt: client.createdAt.toISOString(),
  lastUsedAt: client.lastUsedAt?.toISOString() ?? null,
  expiresAt: expiresOf(client)?.toISOString() ?? null,
});

type Options = { json?: boolean; dataDir?: string; config?: string };

/** The embedded provider keeps registered clients in the store; Keycloak in the realm (Admin API). */
const onKeycloak = (options: Options) => settingsFrom(options).idp === "keycloak";

const listClients = (options: Options): Promise<Listed[]> =>
  onKeycloak(options)
    ? withKeycloakAdmin(options, ({ admin, realm }) => listKeycloakRegisteredClients(admin, realm))
    : withStore(options, (store) => listRegisteredClients(store.db));

const findClient = (options: Options, clientId: string): Promise<Listed | undefined> =>
  onKeycloak(options)
    ? withKeycloakAdmin(options, ({ admin, realm }) => findKeycloakRegisteredClient(admin, realm, clientId))
    : withStore(options, async (store) => (await findRegisteredClient(store.db, clientId)) ?? undefined);

const revokeClient = (options: Options, clientId: string): Promise<boolean> =>
  onKeycloak(options)
    ? withKeycloakAdmin(options, ({ admin, realm }) => revokeKeycloakRegisteredClient(admin, realm, clientId))
    : withStore(options, async (store) => Boolean(await revokeRegisteredClient(store.db, clientId)));

export function registerClients(program: Command): void {
  const clients = program
    .command("clients")
    .description(
      "Clients registered dynamically (DYNAMIC_CLIENT_REGISTRATION), in the embedded identity provider or Keycloak",
    );
  const common = (c: Command) =>
    c
      .option("--data-dir <dir>", "data directory (default: IMAGING_DATA_DIR, else ./data)")
      .option("--config <file>", "JSON config file")
      .option("--json", "print JSON");

  common(clients.command("list").description("List registered clients")).action(async (options: Options) => {
    const list = await listClients(options);
    emit(Boolean(options.json), list.map(view), () =>
      list.length === 0
        ? "No registered client."
        : columnsTable(list, {
            "CLIENT ID": (c) => c.clientId,
            NAME: (c) => c.clientName ?? "-",
            "REDIRECT URIS": (c) => c.redirectUris.join(" "),
            CREATED: (c) => c.createdAt.toISOString(),
            "LAST USED": (c) =>
              c.lastUsedAt ? c.lastUsedAt.toISOString() : `never (expires ${when(expiresOf(c))})`,
          }),
    );
  });

  common(clients.command("show").description("Show one registered client").argument("<client-id>")).action(
    async (clientId: string, options: Options) => {
      const client = await findClient(options, clientId);
      if (!client) throw new CliError(`No registered client '${clientId}' (see: imaging clients list)`);
      const shown = view(client);
      emit(Boolean(options.json), shown, () =>
        [
          `Client ID:      ${shown.clientId}`,
          `Name:           ${shown.clientName ?? "-"} (unverified: chosen by the client)`,
          `Redirect URIs:  ${shown.redirectUris.join("\n                ")}`,
          `Registered from ${shown.registeredFrom ?? "an unknown address"} at ${shown.createdAt}`,
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
  ).action(async (clientId: string, options: Options) => {
    const found = await revokeClient(options, clientId);
    if (!found) throw new CliError(`No registered client '${clientId}' (see: imaging clients list)`);
    emit(
      Boolean(options.json),
      { clientId, revoked: true },
      () =>
        `Client ${clientId} revoked: its refresh tokens and codes no longer work, its access tokens stop at their next use through the gateway's token exchange`,
    );
  });
}
