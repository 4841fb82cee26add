import { type Kysely, sql } from "kysely";
import type { Database } from "./schema.ts";

/** Rows of migration 005: one per oidc-provider model instance. */
export interface OidcPayloadsTable {
  model: string;
  id: string;
  /** The model's JSON. */
  payload: string;
  grant_id: string | null;
  uid: string | null;
  user_code: string | null;
  /** Epoch milliseconds; null: never expires. */
  expires_at: number | null;
  /** Epoch milliseconds of the one-time use (authorization codes, rotated refresh tokens...). */
  consumed_at: number | null;
}

type OidcDb = Kysely<Database & { oidc_payloads: OidcPayloadsTable }>;

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
 * oidc-provider persistence in the platform store (SQLite or PostgreSQL), so sessions, grants and
 * refresh tokens survive restarts and are shared by processes using the same store. Expired rows are
 * never returned and are deleted by `purgeExpiredOidcPayloads`.
 */
export function createOidcAdapterFactory(
  db: Kysely<Database>,
  now: () => number = Date.now,
): (model: string) => OidcAdapter {
  const table = db.withTables<{ oidc_payloads: OidcPayloadsTable }>() as OidcDb;
  const live = (model: string) =>
    table
      .selectFrom("oidc_payloads")
      .select(["payload", "consumed_at"])
      .where("model", "=", model)
      .where((eb) => eb.or([eb("expires_at", "is", null), eb("expires_at", ">", now())]));

  const toPayload = (row: { payload: string; consumed_at: number | null } | undefined) => {
    if (!row) return undefined;
    const payload = JSON.parse(row.payload) as AdapterPayload;
    if (row.consumed_at !== null) payload.consumed = Math.floor(Number(row.consumed_at) / 1000);
    return payload;
  };

  return (model: string): OidcAdapter => ({
    async upsert(id, payload, expiresIn) {
      const row: OidcPayloadsTable = {
        model,
        id,
        payload: JSON.stringify(payload),
        grant_id: GRANTABLE.has(model) && typeof payload.grantId === "string" ? payload.grantId : null,
        uid: typeof payload.uid === "string" ? payload.uid : null,
        user_code: typeof payload.userCode === "string" ? payload.userCode : null,
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
      return toPayload(await live(model).where("id", "=", id).executeTakeFirst());
    },
    async findByUid(uid) {
      return toPayload(await live(model).where("uid", "=", uid).executeTakeFirst());
    },
    async findByUserCode(userCode) {
      return toPayload(await live(model).where("user_code", "=", userCode).executeTakeFirst());
    },
    async consume(id) {
      await table
        .updateTable("oidc_payloads")
        .set({ consumed_at: now() })
        .where("model", "=", model)
        .where("id", "=", id)
        .execute();
    },
    async destroy(id) {
      await table.deleteFrom("oidc_payloads").where("model", "=", model).where("id", "=", id).execute();
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
  const table = db.withTables<{ oidc_payloads: OidcPayloadsTable }>() as OidcDb;
  const result = await table
    .deleteFrom("oidc_payloads")
    .where("expires_at", "is not", null)
    .where("expires_at", "<", now() - graceMs)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Rows per model, for diagnostics and tests. */
export async function countOidcPayloads(db: Kysely<Database>): Promise<Record<string, number>> {
  const table = db.withTables<{ oidc_payloads: OidcPayloadsTable }>() as OidcDb;
  const rows = await table
    .selectFrom("oidc_payloads")
    .select(["model", sql<number>`count(*)`.as("count")])
    .groupBy("model")
    .execute();
  return Object.fromEntries(rows.map((r) => [r.model, Number(r.count)]));
}
