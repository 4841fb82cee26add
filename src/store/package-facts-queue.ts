/**
 * The packages whose registry facts are still to be looked up (migration 023): an upload queues them in
 * the transaction that records its analysis, so a restart never loses the work, and a looker-up claims
 * a few at a time for a while (`claimed_until`), so that of several replicas only one looks each up. A
 * claim that outlives its process (a crash) expires and the package is claimed again.
 */
import { type Kysely, SqliteAdapter, sql, type Transaction } from "kysely";
import { chunks } from "./batch.ts";
import type { Database } from "./schema.ts";

type Db = Kysely<Database> | Transaction<Database>;

/** Any constant: the PostgreSQL advisory lock key of the writes to packages' versions (below). */
const PACKAGE_WRITES_LOCK = 2_028_028;

/**
 * Orders the writes of package versions between analyses and facts lookups on PostgreSQL: both insert
 * versions of the same packages and recompute their facts, and two such transactions at once could
 * deadlock or collide on a version both insert. Analyses take the lock shared (they do not wait for one
 * another), a facts lookup exclusive, for one package's short transaction. SQLite has one writer.
 */
export async function lockPackageWrites(
  trx: Transaction<Database>,
  mode: "shared" | "exclusive",
): Promise<void> {
  if (trx.getExecutor().adapter instanceof SqliteAdapter) return;
  if (mode === "shared") await sql`select pg_advisory_xact_lock_shared(${PACKAGE_WRITES_LOCK})`.execute(trx);
  else await sql`select pg_advisory_xact_lock(${PACKAGE_WRITES_LOCK})`.execute(trx);
}

/** Queues the packages among `packageIds` that have no published version yet (already queued: kept). */
export async function queueMissingFacts(db: Db, packageIds: Iterable<number>, now: number): Promise<void> {
  for (const batch of chunks([...new Set(packageIds)], 400)) {
    await db
      .insertInto("package_facts_queue")
      .columns(["package_id", "enqueued_at", "attempts", "claimed_until"])
      .expression((eb) =>
        eb
          .selectFrom("packages as p")
          .select([
            "p.id",
            sql<number>`cast(${now} as bigint)`.as("enqueued_at"),
            sql<number>`0`.as("attempts"),
            sql<number>`cast(0 as bigint)`.as("claimed_until"),
          ])
          .where("p.id", "in", batch)
          .where(({ not, exists, selectFrom }) =>
            not(
              exists(
                selectFrom("package_versions as pv")
                  .select("pv.id")
                  .whereRef("pv.package_id", "=", "p.id")
                  .where("pv.published", "=", 1),
              ),
            ),
          ),
      )
      .onConflict((oc) => oc.column("package_id").doNothing())
      .execute();
  }
}

export interface ClaimedPackage {
  packageId: number;
  ecosystem: "npm" | "maven";
  name: string;
  attempts: number;
}

/**
 * Claims up to `limit` packages nobody holds, oldest first, for `leaseMs`. The claim re-checks
 * `claimed_until` on the row it updates: of two replicas racing for a row, PostgreSQL re-evaluates that
 * condition for the second once the first commits, and SQLite runs one writer at a time.
 */
export async function claimPackages(
  db: Kysely<Database>,
  claimer: string,
  limit: number,
  now: number,
  leaseMs: number,
): Promise<ClaimedPackage[]> {
  const candidates = await db
    .selectFrom("package_facts_queue")
    .select("package_id")
    .where("claimed_until", "<=", now)
    .orderBy("enqueued_at")
    .orderBy("package_id")
    .limit(limit)
    .execute();
  if (candidates.length === 0) return [];
  const claimed = await db
    .updateTable("package_facts_queue")
    .set({ claimed_by: claimer, claimed_until: now + leaseMs })
    .where(
      "package_id",
      "in",
      candidates.map((c) => c.package_id),
    )
    .where("claimed_until", "<=", now)
    .returning(["package_id", "attempts"])
    .execute();
  if (claimed.length === 0) return [];
  const packages = await db
    .selectFrom("packages")
    .select(["id", "ecosystem", "name"])
    .where(
      "id",
      "in",
      claimed.map((c) => c.package_id),
    )
    .execute();
  const attempts = new Map(claimed.map((c) => [c.package_id, c.attempts]));
  return packages.map((p) => ({
    packageId: p.id,
    ecosystem: p.ecosystem as ClaimedPackage["ecosystem"],
    name: p.name,
    attempts: attempts.get(p.id) ?? 0,
  }));
}

/** The packages' facts are stored (or there are none to get): they leave the queue. */
export async function finishPackages(db: Db, packageIds: readonly number[]): Promise<void> {
  for (const batch of chunks(packageIds, 400)) {
    await db.deleteFrom("package_facts_queue").where("package_id", "in", batch).execute();
  }
}

/** The lookup failed: released until `retryAt` (epoch ms), the attempt and its reason kept. */
export async function postponePackage(
  db: Db,
  packageId: number,
  retryAt: number,
  reason: string,
): Promise<void> {
  await db
    .updateTable("package_facts_queue")
    .set((eb) => ({
      attempts: eb("attempts", "+", 1),
      claimed_by: null,
      claimed_until: retryAt,
      last_error: reason.slice(0, 1000),
    }))
    .where("package_id", "=", packageId)
    .execute();
}

/** A stopping process hands back what it holds, for another replica or its next start. */
export async function releaseClaims(db: Db, claimer: string): Promise<void> {
  await db
    .updateTable("package_facts_queue")
    .set({ claimed_by: null, claimed_until: 0 })
    .where("claimed_by", "=", claimer)
    .execute();
}

/** How many packages wait for their facts (for progress and tests). */
export async function pendingFactsCount(db: Db): Promise<number> {
  const row = await db
    .selectFrom("package_facts_queue")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
