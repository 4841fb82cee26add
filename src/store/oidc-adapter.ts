import { createHash } from "node:crypto";
import type { Kysely } from "kysely";
import type { Database, OidcPayloadsTable } from "./schema.ts";

/** What oidc-provider stores and reads back: a JSON object, plus `consumed` (epoch seconds) once used. */
export type AdapterPayload = Record<string, unknown> & {
  grantId?: string;
  uid?: string;
  userCode?: string;
  consumed?: number;
};

/** The adapter contract of oidc-provider 9 (example/my_adapter.js), one instance per model name. */
export interface OidcAdapter {
  upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void>;
  find(id: string): Promise<AdapterPayload | undefined>;
  findByUid(uid: string): Promise<AdapterPayload | undefined>;
  findByUserCode(userCode: string): Promise<AdapterPayload | undefined>;
  consume(id: string): Promise<void>;
  destroy(id: string): Promise<void>;
  revokeByGrantId(grantId: string): Promise<void>;
}

/** Models whose instances belong to a grant and go away with it (the provider's in-memory adapter's list). */
const GRANTABLE = new Set([
  "AccessToken",
  "AuthorizationCode",
  "RefreshToken",
  "DeviceCode",
  "BackchannelAuthenticationRequest",
  "PreAuthorizedCode",
]);

/**
 * How an id is stored: its SHA-256 (base64url). The ids are the tokens themselves (refresh tokens,
 * authorization codes, session cookies), random with 256 bits, so a plain hash cannot be reversed
 * and reading the store gives nothing a client could present (as Doorkeeper's and GitLab's hashed
 * token secrets).
 */
export function oidcKey(id: string): string {
  return createHash("sha256").update(id, "utf8").digest("base64url");
}

/** Payload member listing the fields that held the id (removed from the stored JSON, put back on read). */
export const ID_FIELDS = "@idFields";

/**
 * The payload as stored: every top-level field equal to the id removed and named in ID_FIELDS, and
 * an interaction's copy of the session cookie (`session.cookie`, the session's id) left out: the
 * provider writes it for applications to read, and nothing here reads it.
 */
export function storedPayload(id: string, payload: AdapterPayload): string {
  const stored: Record<string, unknown> = {};
  const idFields: string[] = [];
  for (const [field, value] of Object.entries(payload)) {
    if (value === id) idFields.push(field);
    else if (field === "session" && typeof value === "object" && value !== null && "cookie" in value) {
      const { cookie: _sessionId, ...session } = value as Record<string, unknown>;
      stored[field] = session;
    } else stored[field] = value;
  }
  if (idFields.length > 0) stored[ID_FIELDS] = idFields;
  return JSON.stringify(stored);
}

/**
 * oidc-provider persistence in the platform store (SQLite or PostgreSQL), so sessions, grants and
 * refresh tokens survive restarts and are shared by processes using the same store. Expired rows are
 * never returned and are deleted by `purgeExpiredOidcPayloads`.
 */
export function createOidcAdapterFactory(
  db: Kysely<Database>,
  now: () => number = Date.now,
): (model: string) => OidcAdapter {
  const table = db;
  const live = (model: string) =>
    table
      .selectFrom("oidc_payloads")
      .select(["payload", "consumed_at"])
      .where("model", "=", model)
      .where((eb) => eb.or([eb("expires_at", "is", null), eb("expires_at", ">", now())]));

  /** `id`: the instance's id when the caller knows it (find), to put back the fields that held it. */
  const toPayload = (row: { payload: string; consumed_at: number | null } | undefined, id?: string) => {
    if (!row) return undefined;
    const payload = JSON.parse(row.payload) as AdapterPayload;
    const idFields = payload[ID_FIELDS];
    delete payload[ID_FIELDS];
    if (id !== undefined && Array.isArray(idFields)) {
      for (const field of idFields) if (typeof field === "string") payload[field] = id;
    }
    if (row.consumed_at !== null) payload.consumed = Math.floor(Number(row.consumed_at) / 1000);
    return payload;
  };

  return (model: string): OidcAdapter => ({
    async upsert(id, payload, expiresIn) {
      const row: OidcPayloadsTable = {
        model,
        id: oidcKey(id),
        payload: storedPayload(id, payload),
        grant_id: GRANTABLE.has(model) && typeof payload.grantId === "string" ? payload.grantId : null,
        // A uid equal to the id (interactions) is the id: not stored.
        uid: typeof payload.uid === "string" && payload.uid !== id ? payload.uid : null,
        user_code: typeof payload.userCode === "string" ? oidcKey(payload.userCode) : null,
        expires_at: typeof expiresIn === "number" ? now() + expiresIn * 1000 : null,
        consumed_at: null,
      };
      await table
        .insertInto("oidc_payloads")
        .values(row)
        .onConflict((oc) =>
          oc.columns(["model", "id"]).doUpdateSet({
            payload: row.payload,
            grant_id: row.grant_id,
            uid: row.uid,
            user_code: row.user_code,
            expires_at: row.expires_at,
          }),
        )
        .execute();
    },
    async find(id) {
      return toPayload(await live(model).where("id", "=", oidcKey(id)).executeTakeFirst(), id);
    },
    async findByUid(uid) {
      return toPayload(await live(model).where("uid", "=", uid).executeTakeFirst());
    },
    async findByUserCode(userCode) {
      return toPayload(await live(model).where("user_code", "=", oidcKey(userCode)).executeTakeFirst());
    },
    async consume(id) {
      await table
        .updateTable("oidc_payloads")
        .set({ consumed_at: now() })
        .where("model", "=", model)
        .where("id", "=", oidcKey(id))
        .execute();
    },
    async destroy(id) {
      await table
        .deleteFrom("oidc_payloads")
        .where("model", "=", model)
        .where("id", "=", oidcKey(id))
        .execute();
    },
    async revokeByGrantId(grantId) {
      await table.deleteFrom("oidc_payloads").where("grant_id", "=", grantId).execute();
    },
  });
}

/** Deletes rows expired for more than `graceMs`; returns how many. */
export async function purgeExpiredOidcPayloads(
  db: Kysely<Database>,
  graceMs = 60_000,
  now: () => number = Date.now,
): Promise<number> {
  const table = db;
  const result = await table
    .deleteFrom("oidc_payloads")
    .where("expires_at", "is not", null)
    .where("expires_at", "<", now() - graceMs)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
