import type ClientRepresentation from "@keycloak/keycloak-admin-client/lib/defs/clientRepresentation.js";
import type { KeycloakAdmin } from "./admin.ts";

/**
 * Clients registered anonymously through the gateway (DYNAMIC_CLIENT_REGISTRATION, IDP=keycloak).
 * Keycloak records neither when a client was created nor that it was registered anonymously, so the
 * gateway stamps each registration it forwarded with these attributes (Admin API), and the sweep
 * stamps when it finds the client signed in; only stamped clients are listed, revoked or swept.
 */
export const REGISTERED_AT = "imaging.registered-at";
export const REGISTERED_FROM = "imaging.registered-from";
export const LAST_USED_AT = "imaging.last-used-at";

interface KeycloakRegisteredClient {
  /** Keycloak's internal id. */
  id: string;
  clientId: string;
  clientName: string | null;
  redirectUris: string[];
  sourceAddress: string | null;
  createdAt: Date;
  /** When a sweep last found a session of it (Keycloak keeps no last-use time of its own). */
  lastUsedAt: Date | null;
}

const dateOf = (value: unknown) => {
  const date = typeof value === "string" ? new Date(value) : undefined;
  return date && !Number.isNaN(date.getTime()) ? date : null;
};

function viewOf(client: ClientRepresentation): KeycloakRegisteredClient | undefined {
  const attributes = (client.attributes ?? {}) as Record<string, unknown>;
  const createdAt = dateOf(attributes[REGISTERED_AT]);
  if (!client.id || !client.clientId || !createdAt) return undefined;
  return {
    id: client.id,
    clientId: client.clientId,
    clientName: client.name ?? null,
    redirectUris: client.redirectUris ?? [],
    sourceAddress: typeof attributes[REGISTERED_FROM] === "string" ? attributes[REGISTERED_FROM] : null,
    createdAt,
    lastUsedAt: dateOf(attributes[LAST_USED_AT]),
  };
}

/** Keycloak keeps a client's name in 255 characters: the parts are cut to fit. */
const cut = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** The unverified mark Keycloak's own consent page shows (it shows the client's name). */
export function unverifiedName(name: string | undefined, redirectUris: readonly string[]): string {
  const hosts = [...new Set(redirectUris.map((uri) => URL.parse(uri)?.hostname).filter(Boolean))];
  const claimed = name?.trim() ? `“${cut(name.trim(), 100)}”` : "(no name)";
  return `Unverified client ${claimed} (redirects to ${cut(hosts.join(", "), 100) || "?"})`;
}

/** Marks a client Keycloak just registered through the gateway: when, and from which address. */
export async function stampRegisteredClient(
  admin: KeycloakAdmin,
  realm: string,
  clientId: string,
  sourceAddress: string,
  now = new Date(),
): Promise<void> {
  const [client] = await admin.clients.find({ realm, clientId, max: 1 });
  if (!client?.id) throw new Error(`Keycloak has no client ${clientId} right after registering it`);
  await admin.clients.update(
    { realm, id: client.id },
    {
      ...client,
      description: "Registered anonymously (DYNAMIC_CLIENT_REGISTRATION); its name is its own claim",
      attributes: {
        ...client.attributes,
        [REGISTERED_AT]: now.toISOString(),
        [REGISTERED_FROM]: sourceAddress,
      },
    },
  );
}

export async function listKeycloakRegisteredClients(
  admin: KeycloakAdmin,
  realm: string,
): Promise<KeycloakRegisteredClient[]> {
  const found: KeycloakRegisteredClient[] = [];
  const page = 100;
  for (let first = 0; ; first += page) {
    const clients = await admin.clients.find({ realm, first, max: page });
    for (const client of clients) {
      const view = viewOf(client);
      if (view) found.push(view);
    }
    if (clients.length < page) break;
  }
  return found.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
}

export async function findKeycloakRegisteredClient(
  admin: KeycloakAdmin,
  realm: string,
  clientId: string,
): Promise<KeycloakRegisteredClient | undefined> {
  const [client] = await admin.clients.find({ realm, clientId, max: 1 });
  // find() matches clientId as a search by default in some versions: compare exactly.
  return client && client.clientId === clientId ? viewOf(client) : undefined;
}

/**
 * Deletes a registered client: Keycloak then refuses its codes and refresh tokens, and its access
 * tokens at their next exchange by the gateway. Other clients are never deleted this way.
 */
export async function revokeKeycloakRegisteredClient(
  admin: KeycloakAdmin,
  realm: string,
  clientId: string,
): Promise<boolean> {
  const client = await findKeycloakRegisteredClient(admin, realm, clientId);
  if (!client) return false;
  await admin.clients.del({ realm, id: client.id });
  return true;
}

interface SweepResult {
  deleted: string[];
  /** Clients found signed in (stamped last used). */
  used: string[];
}

/**
 * One pass of the expiry of registered clients: a client with a user or offline session is stamped
 * used (and never expires); one never used, older than `ttlSeconds`, is deleted.
 */
export async function sweepKeycloakRegisteredClients(
  admin: KeycloakAdmin,
  realm: string,
  ttlSeconds: number,
  now = new Date(),
): Promise<SweepResult> {
  const result: SweepResult = { deleted: [], used: [] };
  for (const client of await listKeycloakRegisteredClients(admin, realm)) {
    const sessions = (await admin.clients.getSessionCount({ realm, id: client.id })).count ?? 0;
    const offline = (await admin.clients.getOfflineSessionCount({ realm, id: client.id })).count ?? 0;
    if (sessions + offline > 0) {
      const current = (await admin.clients.findOne({ realm, id: client.id })) ?? undefined;
      if (!current) continue;
      await admin.clients.update(
        { realm, id: client.id },
        { ...current, attributes: { ...current.attributes, [LAST_USED_AT]: now.toISOString() } },
      );
      result.used.push(client.clientId);
      continue;
    }
    if (client.lastUsedAt) continue;
    if (now.getTime() - client.createdAt.getTime() < ttlSeconds * 1000) continue;
    await admin.clients.del({ realm, id: client.id });
    result.deleted.push(client.clientId);
  }
  return result;
}
