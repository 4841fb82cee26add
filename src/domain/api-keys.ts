/**
 * The rules of API keys: their format (`imk_<id>_<secret>`), how the secret is made and hashed, and
 * how a presented key is checked. The rows live in store/api-keys.ts.
 */

import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { Kysely } from "kysely";
import type { Role } from "../contracts/platform.ts";
import {
  type ApiKeyInfo,
  type CreatedApiKey,
  findApiKeyRow,
  insertApiKey,
  toApiKeyInfo,
} from "../store/api-keys.ts";
import { nowIso } from "../store/clock.ts";
import type { Database } from "../store/schema.ts";

const KEY_PATTERN = /^imk_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;

/** Keys are random 256-bit secrets, so a plain SHA-256 is a sufficient one-way hash for them. */
function hashSecret(secret: string): string {
  return createHash("sha256").update(secret).digest("hex");
}

/** A new key for `user`: the full key is returned once, only its hash is stored. */
export async function createApiKey(
  db: Kysely<Database>,
  input: { user: string; role: Role; applications: readonly string[] },
): Promise<CreatedApiKey> {
  const id = randomBytes(8).toString("hex");
  const secret = randomBytes(32).toString("base64url");
  const info: ApiKeyInfo = {
    id,
    user: input.user,
    role: input.role,
    applications: [...new Set(input.applications)].sort(),
    createdAt: nowIso(),
    revokedAt: null,
  };
  await insertApiKey(db, info, hashSecret(secret));
  return { ...info, key: `imk_${id}_${secret}` };
}

/** The key's owner and rights, or undefined when the key is malformed, unknown or revoked. */
export async function verifyApiKey(db: Kysely<Database>, key: string): Promise<ApiKeyInfo | undefined> {
  const match = KEY_PATTERN.exec(key);
  if (!match) return undefined;
  const [, id, secret] = match as unknown as [string, string, string];
  const row = await findApiKeyRow(db, id);
  if (!row || row.revoked_at) return undefined;
  const expected = Buffer.from(row.secret_hash, "hex");
  const actual = Buffer.from(hashSecret(secret), "hex");
  if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) return undefined;
  return toApiKeyInfo(row);
}
