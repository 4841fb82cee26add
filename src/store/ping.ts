import { type Kysely, sql } from "kysely";
import type { Database } from "./schema.ts";
import { asStoreUnavailable } from "./store-errors.ts";

/**
 * Whether the store answers a trivial query within `timeoutMs` (readiness): the reason when it does not,
 * in words that name no host or driver message (the pool logs those when the database goes down).
 */
export async function pingStore(db: Kysely<Database>, timeoutMs = 2_000): Promise<string | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`the store gave no answer within ${timeoutMs} ms`), timeoutMs);
  });
  try {
    return await Promise.race([
      sql`select 1`.execute(db).then(
        () => undefined,
        (error: unknown) => asStoreUnavailable(error)?.message ?? "the store query failed",
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
