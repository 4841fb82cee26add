import type { Kysely } from "kysely";
import { oidcKey } from "./oidc-adapter.ts";
import type { Database, RegisteredClientsTable } from "./schema.ts";

export interface RegisteredClient {
  clientId: string;
  clientName: string | null;
  redirectUris: string[];
  sourceAddress: string;
  createdAt: Date;
  lastUsedAt: Date | null;
}

const toClient = (row: RegisteredClientsTable): RegisteredClient => ({
  clientId: row.client_id,
  clientName: row.client_name,
  redirectUris: JSON.parse(row.redirect_uris) as string[],
  sourceAddress: row.source_address,
  createdAt: new Date(Number(row.created_at)),
  lastUsedAt: row.last_used_at === null ? null : new Date(Number(row.last_used_at)),
});

export async function recordRegisteredClient(
  db: Kysely<Database>,
  client: {
    clientId: string;
    clientName?: string | undefined;
    redirectUris: string[];
    sourceAddress: string;
  },
  now: number = Date.now(),
): Promise<void> {
  await db
    .insertInto("registered_clients")
    .values({
      client_id: client.clientId,
      client_name: client.clientName ?? null,
      redirect_uris: JSON.stringify(client.redirectUris),
      source_address: client.sourceAddress,
      created_at: now,
      last_used_at: null,
    })
    .execute();
}

/** A sign-in completed (tokens issued): the client is in use and no longer expires. */
export async function markRegisteredClientUsed(
  db: Kysely<Database>,
  clientId: string,
  now: number = Date.now(),
): Promise<void> {
  await db
    .updateTable("registered_clients")
    .set({ last_used_at: now })
    .where("client_id", "=", clientId)
    .execute();
}

export async function listRegisteredClients(db: Kysely<Database>): Promise<RegisteredClient[]> {
  const rows = await db.selectFrom("registered_clients").selectAll().orderBy("created_at").execute();
  return rows.map(toClient);
}

export async function findRegisteredClient(
  db: Kysely<Database>,
  clientId: string,
): Promise<RegisteredClient | undefined> {
  const row = await db
    .selectFrom("registered_clients")
    .selectAll()
    .where("client_id", "=", clientId)
    .executeTakeFirst();
  return row ? toClient(row) : undefined;
}

const TOKEN_MODELS = ["Grant", "AccessToken", "AuthorizationCode", "RefreshToken"];

/**
 * Deletes a registered client and everything issued to it: its provider record, its grants and the
 * codes and refresh tokens of those grants (the provider then refuses them). Returns whether the
 * client existed.
 */
export async function revokeRegisteredClient(db: Kysely<Database>, clientId: string): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const deleted = await trx
      .deleteFrom("registered_clients")
      .where("client_id", "=", clientId)
      .executeTakeFirst();
    const rows = await trx
      .selectFrom("oidc_payloads")
      .select(["model", "id", "payload", "grant_id"])
      .where("model", "in", TOKEN_MODELS)
      .execute();
    const grantIds = new Set<string>();
    for (const row of rows) {
      const payload = JSON.parse(row.payload) as { clientId?: string; jti?: string };
      if (payload.clientId !== clientId) continue;
      if (row.grant_id) grantIds.add(row.grant_id);
      await trx.deleteFrom("oidc_payloads").where("model", "=", row.model).where("id", "=", row.id).execute();
    }
    if (grantIds.size > 0) {
      await trx
        .deleteFrom("oidc_payloads")
        .where("grant_id", "in", [...grantIds])
        .execute();
    }
    const client = await trx
      .deleteFrom("oidc_payloads")
      .where("model", "=", "Client")
      .where("id", "=", oidcKey(clientId))
      .executeTakeFirst();
    return Number(deleted.numDeletedRows) + Number(client.numDeletedRows) > 0;
  });
}

/** Deletes the registered clients that never completed a sign-in within `ttlSeconds`; returns their ids. */
export async function expireUnusedRegisteredClients(
  db: Kysely<Database>,
  ttlSeconds: number,
  now: number = Date.now(),
): Promise<string[]> {
  const rows = await db
    .selectFrom("registered_clients")
    .select("client_id")
    .where("last_used_at", "is", null)
    .where("created_at", "<", now - ttlSeconds * 1000)
    .execute();
  for (const row of rows) await revokeRegisteredClient(db, row.client_id);
  return rows.map((r) => r.client_id);
}
