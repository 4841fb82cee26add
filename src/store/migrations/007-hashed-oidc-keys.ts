import { createHash } from "node:crypto";
import type { Kysely } from "kysely";
import type { OidcPayloadsTable } from "../schema.ts";

type OidcDb = Kysely<{ oidc_payloads: OidcPayloadsTable }>;

/**
 * Until 006 the identity provider's rows were keyed by the artifacts themselves (refresh tokens,
 * authorization codes, session ids) and their JSON repeated them: anyone able to read the store could
 * redeem them. From 007 the key is the id's SHA-256 and the JSON no longer holds the id, as
 * oidc-adapter.ts reads and writes them; the rewrite below is that format as of 007, kept here so that a
 * later change to the adapter never changes what this migration does.
 * Existing rows are rewritten so sign-ins, sessions and refresh tokens issued before keep working;
 * all rows at once, in one transaction, so a crash leaves either every row old or every row new.
 */
export function hashedOidcKeysMigration() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      const rewrite = async (trx: OidcDb) => {
        const rows = await trx
          .selectFrom("oidc_payloads")
          .select(["model", "id", "payload", "uid", "user_code"])
          .execute();
        for (const row of rows) {
          await trx
            .updateTable("oidc_payloads")
            .set({
              id: keyOf(row.id),
              payload: payloadWithoutId(row.id, JSON.parse(row.payload) as Record<string, unknown>),
              uid: row.uid === row.id ? null : row.uid,
              user_code: row.user_code === null ? null : keyOf(row.user_code),
            })
            .where("model", "=", row.model)
            .where("id", "=", row.id)
            .execute();
        }
      };
      const oidc = db as unknown as OidcDb;
      // PostgreSQL runs migrations in a transaction already; SQLite's migrator does not.
      if (oidc.isTransaction) await rewrite(oidc);
      else await oidc.transaction().execute(rewrite);
    },
  };
}

const keyOf = (id: string): string => createHash("sha256").update(id, "utf8").digest("base64url");

/**
 * The payload without the id: each top-level field equal to it dropped and named in "@idFields" (the
 * adapter puts them back on read), and an interaction's copy of the session cookie left out.
 */
function payloadWithoutId(id: string, payload: Record<string, unknown>): string {
  const kept = Object.fromEntries(
    Object.entries(payload)
      .filter(([, value]) => value !== id)
      .map(([field, value]) => {
        if (field !== "session" || typeof value !== "object" || value === null || !("cookie" in value))
          return [field, value];
        const { cookie: _cookie, ...session } = value as Record<string, unknown>;
        return [field, session];
      }),
  );
  const idFields = Object.keys(payload).filter((field) => payload[field] === id);
  return JSON.stringify(idFields.length > 0 ? { ...kept, "@idFields": idFields } : kept);
}
