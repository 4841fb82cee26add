import type { Kysely } from "kysely";
import type { ApiKey as ApiKeyInfo } from "../contracts/admin.ts";
import type { Role } from "../contracts/platform.ts";
import { nowIso } from "./clock.ts";
import type { Database } from "./schema.ts";

/** An API key as the REST API lists it, and as created (`key`: shown once, only its hash is stored). */
export type { ApiKey as ApiKeyInfo, CreatedApiKey } from "../contracts/admin.ts";

/** Stores a new key's row; the key itself, its format and hashing are domain/api-keys.ts's. */
export async function insertApiKey(
  db: Kysely<Database>,
  info: ApiKeyInfo,
  secretHash: string,
): Promise<void> {
  await db
    .insertInto("api_keys")
    .values({
      id: info.id,
      secret_hash: secretHash,
      user_name: info.user,
      role: info.role,
      applications: JSON.stringify(info.applications),
      created_at: info.createdAt,
      revoked_at: info.revokedAt,
    })
    .execute();
}

export async function findApiKeyRow(
  db: Kysely<Database>,
  id: string,
): Promise<Database["api_keys"] | undefined> {
  return await db.selectFrom("api_keys").selectAll().where("id", "=", id).executeTakeFirst();
}

export async function listApiKeys(db: Kysely<Database>): Promise<ApiKeyInfo[]> {
  const rows = await db.selectFrom("api_keys").selectAll().orderBy("created_at").orderBy("id").execute();
  return rows.map(toApiKeyInfo);
}

/** Returns false when no key has that id. Revoking twice keeps the first revocation time. */
export async function revokeApiKey(db: Kysely<Database>, id: string): Promise<boolean> {
  const row = await db
    .selectFrom("api_keys")
    .select(["id", "revoked_at"])
    .where("id", "=", id)
    .executeTakeFirst();
  if (!row) return false;
  if (!row.revoked_at)
    await db.updateTable("api_keys").set({ revoked_at: nowIso() }).where("id", "=", id).execute();
  return true;
}

export function toApiKeyInfo(row: Database["api_keys"]): ApiKeyInfo {
  return {
    id: row.id,
    user: row.user_name,
    role: row.role as Role,
    applications: JSON.parse(row.applications) as string[],
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
  };
}
