import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { Kysely } from "kysely";
import { ROLES, type Role } from "../contracts/platform.ts";
import { nowIso } from "./clock.ts";
import type { Database } from "./schema.ts";

export { ROLES, type Role };

export interface ApiKeyInfo {
  id: string;
  user: string;
  role: Role;
  applications: string[];
  createdAt: string;
  revokedAt: string | null;
}

export interface CreatedApiKey extends ApiKeyInfo {
  /** The full key: shown once, only its hash is stored. */
  key: string;
}

const KEY_PATTERN = /^imk_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;

/** Keys are random 256-bit secrets, so a plain SHA-256 is a sufficient one-way hash for them. */
function hashSecret(secret: string): string {
  return createHash("sha256").update(secret).digest("hex");
}

export async function createApiKey(
  db: Kysely<Database>,
  input: { user: string; role: Role; applications: readonly string[] },
): Promise<CreatedApiKey> {
  const id = randomBytes(8).toString("hex");
  const secret = randomBytes(32).toString("base64url");
  const createdAt = nowIso();
  const applications = [...new Set(input.applications)].sort();
  await db
    .insertInto("api_keys")
    .values({
      id,
      secret_hash: hashSecret(secret),
      user_name: input.user,
      role: input.role,
      applications: JSON.stringify(applications),
      created_at: createdAt,
      revoked_at: null,
    })
    .execute();
  return {
    id,
    key: `imk_${id}_${secret}`,
    user: input.user,
    role: input.role,
    applications,
    createdAt,
    revokedAt: null,
  };
}

export async function listApiKeys(db: Kysely<Database>): Promise<ApiKeyInfo[]> {
  const rows = await db.selectFrom("api_keys").selectAll().orderBy("created_at").orderBy("id").execute();
  return rows.map(toInfo);
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

/** The key's owner and rights, or undefined when the key is malformed, unknown or revoked. */
export async function verifyApiKey(db: Kysely<Database>, key: string): Promise<ApiKeyInfo | undefined> {
  const match = KEY_PATTERN.exec(key);
  if (!match) return undefined;
  const [, id, secret] = match as unknown as [string, string, string];
  const row = await db.selectFrom("api_keys").selectAll().where("id", "=", id).executeTakeFirst();
  if (!row || row.revoked_at) return undefined;
  const expected = Buffer.from(row.secret_hash, "hex");
  const actual = Buffer.from(hashSecret(secret), "hex");
  if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) return undefined;
  return toInfo(row);
}

function toInfo(row: Database["api_keys"]): ApiKeyInfo {
  return {
    id: row.id,
    user: row.user_name,
    role: row.role as Role,
    applications: JSON.parse(row.applications) as string[],
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
  };
}
