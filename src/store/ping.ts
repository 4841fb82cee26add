import { type Kysely, sql } from "kysely";
import type { Database } from "./schema.ts";

/** Whether the store answers a trivial query within `timeoutMs` (readiness): the reason when it does not. */
export async function pingStore(db: Kysely<Database>, timeoutMs = 2_000): Promise<string | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`no answer within ${timeoutMs} ms`), timeoutMs);
  });
  try {
    return await Promise.race([
      sql`select 1`.execute(db).then(
        () => undefined,
        (error: unknown) => (error instanceof Error ? error.message : String(error)),
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
