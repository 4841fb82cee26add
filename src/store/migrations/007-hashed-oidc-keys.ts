import type { Kysely } from "kysely";
import { type AdapterPayload, oidcKey, storedPayload } from "../oidc-adapter.ts";
import type { OidcPayloadsTable } from "../schema.ts";

type OidcDb = Kysely<{ oidc_payloads: OidcPayloadsTable }>;

/**
 * Until 006 the identity provider's rows were keyed by the artifacts themselves (refresh tokens,
 * authorization codes, session ids) and their JSON repeated them: anyone able to read the store could
 * redeem them. From 007 the key is oidcKey(id) and the JSON no longer holds the id (oidc-adapter.ts).
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
              id: oidcKey(row.id),
              payload: storedPayload(row.id, JSON.parse(row.payload) as AdapterPayload),
              uid: row.uid === row.id ? null : row.uid,
              user_code: row.user_code === null ? null : oidcKey(row.user_code),
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
