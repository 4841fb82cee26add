import { type Expression, type Kysely, type RawBuilder, SqliteAdapter, sql } from "kysely";
import type {
  Comparison as ComparisonAnswer,
  Changes as PagedChanges,
  ReferenceChange,
  VulnerablePackageChange,
} from "../contracts/resources.ts";
import { vulnerabilitiesOfVersions } from "./packages.ts";
import type { Database, ReferenceChangesTable } from "./schema.ts";
import { liveAt } from "./sql-helpers.ts";

type Db = Kysely<Database>;

/** The REST resource of a comparison without its two instants (the route adds them). */
export type ComparisonPage = Omit<ComparisonAnswer, "from" | "to">;

export interface ComparePaging {
  limit: number;
  skip: number;
}

/**
 * One page of what changed from analysis `fromSeq` to analysis `toSeq`: each of the six lists is cut
 * at `skip`/`limit` in its order and comes with its total. Both come from change logs written at
 * ingest (migration 017): `package_changes`, sorted per request (it holds only what changed), and
 * `reference_changes`, walked in page order.
 */
export async function compareAnalysesPage(
  db: Db,
  applicationId: number,
  fromSeq: number,
  toSeq: number,
  paging: ComparePaging,
): Promise<ComparisonPage> {
  const packagesPage = (vulnerableOnly: boolean) =>
    addedAndRemoved(fromSeq, toSeq, async (lo, hi) => {
      const [plus, minus] = await Promise.all([
        packageChanges(db, applicationId, lo, hi, 1, vulnerableOnly, paging),
        packageChanges(db, applicationId, lo, hi, -1, vulnerableOnly, paging),
      ]);
      return { plus: plus.page, minus: minus.page, plusTotal: plus.total, minusTotal: minus.total };
    });
  // References: a walk of the change log in page order (referenceChangesPage); adjacent analyses read
  // their totals from `reference_change_totals`, others from `reference_range_totals` (migration 018).
  const referencesPage = addedAndRemoved(fromSeq, toSeq, async (lo, hi) => {
    const [plus, minus, totals] = await Promise.all([
      referenceChangesPage(db, { applicationId, lo, hi, sign: 1, paging }),
      referenceChangesPage(db, { applicationId, lo, hi, sign: -1, paging }),
      referenceChangeTotals(db, applicationId, lo, hi),
    ]);
    return { plus, minus, plusTotal: totals.plus, minusTotal: totals.minus };
  });
  const [packages, vulnerablePackages, references] = await Promise.all([
    packagesPage(false),
    packagesPage(true),
    referencesPage,
  ]);
  return {
    packages: {
      ...packages,
      added: packages.added.map(({ name, version }) => ({ name, version })),
      removed: packages.removed.map(({ name, version }) => ({ name, version })),
    },
    references,
    vulnerablePackages: await withVulnerabilities(db, vulnerablePackages),
  };
}

interface VersionRow {
  versionId: number;
  name: string;
  version: string;
}

async function withVulnerabilities(
  db: Db,
  page: PagedChanges<VersionRow>,
): Promise<PagedChanges<VulnerablePackageChange>> {
  const vulnerabilities = await vulnerabilitiesOfVersions(db, [
    ...page.added.map((p) => p.versionId),
    ...page.removed.map((p) => p.versionId),
  ]);
  const list = (rows: VersionRow[]) =>
    rows.map((p) => ({
      name: p.name,
      version: p.version,
      vulnerabilities: (vulnerabilities.get(p.versionId) ?? []).map((v) => v.cve),
    }));
  return { ...page, added: list(page.added), removed: list(page.removed) };
}

/**
 * What changed from analysis `fromSeq` to analysis `toSeq`, from the changes between lo = the earlier
 * and hi = the later one (`plus`: in hi and not in lo, `minus`: the reverse): going back in time
 * swaps added and removed.
 */
async function addedAndRemoved<T>(
  fromSeq: number,
  toSeq: number,
  changes: (
    lo: number,
    hi: number,
  ) => Promise<{ plus: T[]; minus: T[]; plusTotal: number; minusTotal: number }>,
): Promise<PagedChanges<T>> {
  if (fromSeq === toSeq) return { added: [], removed: [], addedTotal: 0, removedTotal: 0 };
  const { plus, minus, plusTotal, minusTotal } = await changes(
    Math.min(fromSeq, toSeq),
    Math.max(fromSeq, toSeq),
  );
  return toSeq > fromSeq
    ? { added: plus, removed: minus, addedTotal: plusTotal, removedTotal: minusTotal }
    : { added: minus, removed: plus, addedTotal: minusTotal, removedTotal: plusTotal };
}

/**
 * The package versions whose changes over analyses lo+1..hi sum to `sign` (+1: in `hi` and not in
 * `lo`; -1: the reverse), a page in name/version order and their count. The log holds only what
 * changed (a few percent of an application's packages per analysis), so sorting it is cheap; the
 * order uses the versions' current rank, which a later publication may shift.
 */
async function packageChanges(
  db: Db,
  applicationId: number,
  lo: number,
  hi: number,
  sign: 1 | -1,
  vulnerableOnly: boolean,
  paging: ComparePaging,
): Promise<{ page: VersionRow[]; total: number }> {
  const net = db
    .selectFrom("package_changes")
    .select(["package_version_id", sql<number>`sum(sign)`.as("net")])
    .where("application_id", "=", applicationId)
    .where("seq", ">", lo)
    .where("seq", "<=", hi)
    .groupBy("package_version_id")
    .as("c");
  let base = db
    .selectFrom(net)
    .innerJoin("package_versions as pv", "pv.id", "c.package_version_id")
    .innerJoin("packages as p", "p.id", "pv.package_id")
    .where("c.net", "=", sign);
  if (vulnerableOnly) {
    base = base.where((eb) =>
      eb.exists(
        eb
          .selectFrom("version_vulnerabilities as vv")
          .select(sql`1`.as("one"))
          .whereRef("vv.package_version_id", "=", "pv.id"),
      ),
    );
  }
  const rows = await base
    .select(["pv.id as version_id", "p.name", "pv.version", sql<number>`count(*) over ()`.as("total")])
    .orderBy("p.name")
    .orderBy("p.ecosystem")
    .orderBy("pv.rank")
    .orderBy("pv.version")
    .limit(paging.limit)
    .offset(paging.skip)
    .execute();
  const total =
    rows.length > 0
      ? Number(rows[0]?.total)
      : paging.skip === 0
        ? 0
        : Number((await base.select(sql<number>`count(*)`.as("n")).executeTakeFirstOrThrow()).n);
  return { page: rows.map((r) => ({ versionId: r.version_id, name: r.name, version: r.version })), total };
}

/**
 * The application's rows of `alias` live in analysis `inSeq` and not in `notSeq`, whose identity has no
 * row live in `notSeq` either (`sameIdentityInNotSeq` selects those rows): what `inSeq` has and `notSeq`
 * lacks. The row's own interval is tested first, as it is cheap and rules out most rows.
 */
function onlyIn(
  alias: string,
  applicationId: number,
  inSeq: number,
  notSeq: number,
  sameIdentityInNotSeq: Expression<unknown>,
): RawBuilder<boolean> {
  return sql<boolean>`${sql.ref(`${alias}.application_id`)} = ${applicationId} and ${liveAt(alias, inSeq)} and not (${liveAt(alias, notSeq)}) and not exists ${sameIdentityInNotSeq}`;
}

/** Package versions used in analysis `inSeq` and not in `notSeq`, read from the validity intervals. */
export function packagesOnlyInQuery(db: Db, applicationId: number, inSeq: number, notSeq: number) {
  return db
    .selectFrom("application_packages as ap")
    .innerJoin("package_versions as pv", "pv.id", "ap.package_version_id")
    .innerJoin("packages as p", "p.id", "pv.package_id")
    .where(onlyIn("ap", applicationId, inSeq, notSeq, sameVersionLiveAt(db, applicationId, notSeq)));
}

/** The application's rows of the package version of `ap` live in analysis `seq`. */
function sameVersionLiveAt(db: Db, applicationId: number, seq: number) {
  return db
    .selectFrom("application_packages as other")
    .select(sql`1`.as("one"))
    .where("other.application_id", "=", applicationId)
    .where("other.package_version_id", "=", sql.ref<number>("ap.package_version_id"))
    .where(liveAt("other", seq));
}

// ---------------------------------------------------------------------------------------------------
// References: the change log

/**
 * The references whose identity (source and target object ids and full names, target package version) is in
 * analysis `inSeq` and not in `notSeq`, one row per identity: the rows of a reference change when
 * either object changes, so identities, not rows, are compared.
 */
export function referencesOnlyInQuery(db: Db, applicationId: number, inSeq: number, notSeq: number) {
  return db
    .selectFrom("object_references as r")
    .innerJoin("application_objects as s", "s.id", "r.source_id")
    .innerJoin("external_objects as t", "t.id", "r.target_id")
    .innerJoin("package_versions as pv", "pv.id", "t.package_version_id")
    .innerJoin("packages as p", "p.id", "pv.package_id")
    .where(onlyIn("r", applicationId, inSeq, notSeq, sameIdentityLiveAt(db, applicationId, notSeq)))
    .select([
      "t.full_name as target_full_name",
      "t.object_id as target_object_id",
      "s.full_name as source_full_name",
      "s.object_id as source_object_id",
      "t.package_version_id",
      "p.name as package_name",
      "pv.version",
    ])
    .distinct();
}

/** The application's references with the identity of `r` (source `s`, target `t`) live in analysis `seq`. */
function sameIdentityLiveAt(db: Db, applicationId: number, seq: number) {
  return db
    .selectFrom("object_references as r2")
    .innerJoin("application_objects as s2", "s2.id", "r2.source_id")
    .innerJoin("external_objects as t2", "t2.id", "r2.target_id")
    .select(sql`1`.as("one"))
    .where("r2.application_id", "=", applicationId)
    .where(liveAt("r2", seq))
    .where("s2.object_id", "=", sql.ref<string>("s.object_id"))
    .where("s2.full_name", "=", sql.ref<string>("s.full_name"))
    .where("t2.object_id", "=", sql.ref<string>("t.object_id"))
    .where("t2.full_name", "=", sql.ref<string>("t.full_name"))
    .where("t2.package_version_id", "=", sql.ref<number>("t.package_version_id"));
}

/** The two directions of a change from `seq - 1` to `seq`: [in, not in, sign]. */
const directions = (seq: number) =>
  [
    [seq, seq - 1, 1],
    [seq - 1, seq, -1],
  ] as const;

/** A change log row's own columns, as literals: PostgreSQL types a bound parameter in a select list as text. */
const logRowColumns = (applicationId: number, seq: number, sign: 1 | -1) => [
  sql<number>`${sql.lit(Math.trunc(applicationId))}`.as("application_id"),
  sql<number>`${sql.lit(Math.trunc(seq))}`.as("seq"),
  sql<number>`${sql.lit(sign)}`.as("sign"),
];

/**
 * Records in the change logs what analysis `seq` changed against analysis `seq - 1`: +1 per package
 * version and per reference identity it adds, -1 per one it removes. Run by ingestion (in the
 * analysis's transaction, after its rows are written) and by migration 017 for stored history.
 * Analyses only ever append, so the log of a stored analysis never changes.
 */
export async function recordChanges(db: Db, applicationId: number, seq: number): Promise<void> {
  if (seq < 2) return;
  for (const [inSeq, notSeq, sign] of directions(seq)) {
    await db
      .insertInto("package_changes")
      .columns(["application_id", "seq", "sign", "package_version_id"])
      .expression(
        packagesOnlyInQuery(db, applicationId, inSeq, notSeq)
          .select([...logRowColumns(applicationId, seq, sign), "pv.id as package_version_id"])
          .distinct(),
      )
      .execute();
  }
  await recordReferenceChanges(db, applicationId, seq);
}

async function recordReferenceChanges(db: Db, applicationId: number, seq: number): Promise<void> {
  for (const [inSeq, notSeq, sign] of directions(seq)) {
    await db
      .insertInto("reference_changes")
      .columns([...IDENTITY, "package_name", "version", "application_id", "seq", "sign"])
      .expression(
        referencesOnlyInQuery(db, applicationId, inSeq, notSeq).select(
          logRowColumns(applicationId, seq, sign),
        ),
      )
      .execute();
  }
  const counted = await db
    .selectFrom("reference_changes")
    .select([
      sql<number>`coalesce(sum(case when sign = 1 then 1 else 0 end), 0)`.as("added"),
      sql<number>`coalesce(sum(case when sign = -1 then 1 else 0 end), 0)`.as("removed"),
    ])
    .where("application_id", "=", applicationId)
    .where("seq", "=", seq)
    .executeTakeFirstOrThrow();
  await db
    .insertInto("reference_change_totals")
    .values({
      application_id: applicationId,
      seq,
      added: Number(counted.added),
      removed: Number(counted.removed),
    })
    .execute();
}

/** The reference totals between analysis `seq - 1` and `seq` (0 and 0 when `seq` changed nothing). */
async function adjacentTotals(
  db: Db,
  applicationId: number,
  seq: number,
): Promise<{ added: number; removed: number }> {
  const row = await db
    .selectFrom("reference_change_totals")
    .select(["added", "removed"])
    .where("application_id", "=", applicationId)
    .where("seq", "=", seq)
    .executeTakeFirst();
  return { added: Number(row?.added ?? 0), removed: Number(row?.removed ?? 0) };
}

/**
 * The change logs and their totals rebuilt from the stored intervals, analysis by analysis in order (each
 * pair's totals derive from the pair ending one analysis earlier): what migration 024 does once, and the
 * same rows ingestion maintains.
 */
export async function rebuildChangeLogs(db: Kysely<Database>): Promise<void> {
  for (const table of [
    "reference_changes",
    "package_changes",
    "reference_change_totals",
    "reference_range_totals",
  ] as const) {
    await db.deleteFrom(table).execute();
  }
  const analyses = await db
    .selectFrom("analyses")
    .select(["application_id", "seq"])
    .where("seq", ">=", 2)
    .orderBy("application_id")
    .orderBy("seq")
    .execute();
  for (const a of analyses) {
    await recordChanges(db, a.application_id, a.seq);
    await recordRangeTotals(db, a.application_id, a.seq);
  }
}

/**
 * Records the reference totals between each earlier analysis `lo` ≤ `seq` - 2 and analysis `seq`
 * (migration 018), from the pair ending at `seq - 1` and the identities `seq` changed (D+ added, D-
 * removed against `seq - 1`): an identity's membership in `seq` differs from `seq - 1` only if it is in
 * D, so for each lo
 *   added(lo, seq)   = added(lo, seq-1) + |D+ \ A_lo| - |D- \ A_lo|
 *   removed(lo, seq) = removed(lo, seq-1) - |D+ ∩ A_lo| + |D- ∩ A_lo|
 * where an identity of D is in A_lo when its membership flipped an odd (D+) or even (D-) number of
 * times over lo+1..seq-1: its earlier log rows, one index range each. Run after recordChanges, by
 * ingestion and by migration 018 in analysis order; analyses only append, so totals never change.
 */
export async function recordRangeTotals(db: Db, applicationId: number, seq: number): Promise<void> {
  if (seq < 3) return;
  const { rows } = await sql<{ lo: number; plus_in: number | null; minus_in: number | null }>`
    select lo,
      sum(case when sign = 1 and flips % 2 = 1 then 1 else 0 end) as plus_in,
      sum(case when sign = -1 and flips % 2 = 0 then 1 else 0 end) as minus_in
    from (
      select l.lo as lo, d.sign as sign,
        (select count(*) from reference_changes r
          where r.application_id = d.application_id
            and r.target_full_name = d.target_full_name and r.target_object_id = d.target_object_id
            and r.source_full_name = d.source_full_name and r.source_object_id = d.source_object_id
            and r.package_version_id = d.package_version_id and r.seq > l.lo and r.seq < d.seq) as flips
      from reference_changes d
      cross join (select seq as lo from analyses where application_id = ${applicationId} and seq <= ${seq - 2}) l
      where d.application_id = ${applicationId} and d.seq = ${seq}
    ) x
    group by lo`.execute(db);
  const inLo = new Map(
    rows.map((r) => [Number(r.lo), { plus: Number(r.plus_in ?? 0), minus: Number(r.minus_in ?? 0) }]),
  );
  const changed = await adjacentTotals(db, applicationId, seq);
  const previous = new Map(
    (
      await db
        .selectFrom("reference_range_totals")
        .select(["lo", "added", "removed"])
        .where("application_id", "=", applicationId)
        .where("hi", "=", seq - 1)
        .execute()
    ).map((r) => [Number(r.lo), { added: Number(r.added), removed: Number(r.removed) }]),
  );
  previous.set(seq - 2, await adjacentTotals(db, applicationId, seq - 1));
  const values = [];
  for (let lo = 1; lo <= seq - 2; lo++) {
    const before = previous.get(lo) ?? { added: 0, removed: 0 };
    const d = inLo.get(lo) ?? { plus: 0, minus: 0 };
    values.push({
      application_id: applicationId,
      hi: seq,
      lo,
      added: before.added + (changed.added - d.plus) - (changed.removed - d.minus),
      removed: before.removed - d.plus + d.minus,
    });
  }
  await db.insertInto("reference_range_totals").values(values).execute();
}

/**
 * A reference's identity in the change log (see referencesOnlyInQuery), in the log's page order: its
 * primary key after the application, before `seq`.
 */
const IDENTITY = [
  "target_full_name",
  "target_object_id",
  "source_full_name",
  "source_object_id",
  "package_version_id",
] as const;
const IDENTITY_ORDER = sql.join(IDENTITY.map((column) => sql.ref(column)));

function changeGroups(db: Db, applicationId: number, lo: number, hi: number) {
  return db
    .selectFrom("reference_changes")
    .where("application_id", "=", applicationId)
    .where("seq", ">", lo)
    .where("seq", "<=", hi)
    .groupBy([...IDENTITY]);
}

/** A reference identity's row (of the change log or of the intervals) as the REST resource states it. */
export function referenceChangeOf(r: {
  source_full_name: string;
  source_object_id: string;
  target_full_name: string;
  target_object_id: string;
  package_name: string;
  version: string;
}): ReferenceChange {
  return {
    source: { fullName: r.source_full_name, id: r.source_object_id },
    target: {
      fullName: r.target_full_name,
      id: r.target_object_id,
      package: r.package_name,
      version: r.version,
    },
  };
}

/** One direction (`sign`) of the reference changes over analyses lo+1..hi, and the page wanted. */
export interface ReferenceChangeQuery {
  applicationId: number;
  lo: number;
  hi: number;
  sign: 1 | -1;
  paging: ComparePaging;
}

/**
 * The references whose changes over analyses lo+1..hi sum to `sign` (+1: in `hi` and not in `lo`; -1:
 * the reverse), one page. Changes alternate +1, -1, so a page is a walk of the log's primary key
 * (application, then page order) over the analyses in between, grouped per identity, stopping after
 * `skip + limit` matches.
 */
async function referenceChangesPage(db: Db, query: ReferenceChangeQuery): Promise<ReferenceChange[]> {
  if (!(db.getExecutor().adapter instanceof SqliteAdapter)) return referenceChangesWalk(db, query);
  const { applicationId, lo, hi, sign, paging } = query;
  const rows = await changeGroups(db, applicationId, lo, hi)
    .select([
      "target_full_name",
      "target_object_id",
      "source_full_name",
      "source_object_id",
      sql<string>`max(package_name)`.as("package_name"),
      sql<string>`max(version)`.as("version"),
    ])
    .having(sql<number>`sum(sign)`, "=", sign)
    .orderBy(IDENTITY_ORDER)
    .limit(paging.limit)
    .offset(paging.skip)
    .execute();
  return rows.map(referenceChangeOf);
}

/** Rows of the log read per step of the PostgreSQL walk. */
const WALK_CHUNK = 1_000;

/**
 * The same page as the grouped query, walked in the primary key's order in chunks (PostgreSQL): its
 * planner hashes every change in the range and sorts the groups (it estimates the `sum(sign)` filter
 * to keep a few groups, so stopping early looks worthless), while an ordered read of the key with a
 * limit is always an index walk. Rows of one identity are consecutive; a group spans chunks.
 */
export async function referenceChangesWalk(
  db: Db,
  query: ReferenceChangeQuery,
  chunk = WALK_CHUNK,
): Promise<ReferenceChange[]> {
  const { applicationId, lo, hi, sign, paging } = query;
  const page: ReferenceChange[] = [];
  if (paging.limit <= 0) return page;
  type Row = Omit<ReferenceChangesTable, "application_id">;
  const sameIdentity = (a: Row, b: Row) =>
    a.target_full_name === b.target_full_name &&
    a.target_object_id === b.target_object_id &&
    a.source_full_name === b.source_full_name &&
    a.source_object_id === b.source_object_id &&
    Number(a.package_version_id) === Number(b.package_version_id);
  let group: { row: Row; net: number } | undefined;
  let matched = 0;
  /** Ends the current group; true when the page is full. */
  const close = (): boolean => {
    if (group && group.net === sign && matched++ >= paging.skip) {
      page.push(referenceChangeOf(group.row));
    }
    group = undefined;
    return page.length >= paging.limit;
  };
  let after: Row | undefined;
  for (;;) {
    let query = db
      .selectFrom("reference_changes")
      .select([...IDENTITY, "seq", "sign", "package_name", "version"])
      .where("application_id", "=", applicationId)
      .where("seq", ">", lo)
      .where("seq", "<=", hi);
    if (after) {
      const a = after;
      query = query.where(
        sql<boolean>`(target_full_name, target_object_id, source_full_name, source_object_id, package_version_id, seq) > (${a.target_full_name}, ${a.target_object_id}, ${a.source_full_name}, ${a.source_object_id}, ${Number(a.package_version_id)}, ${Number(a.seq)})`,
      );
    }
    const rows = (await query.orderBy(IDENTITY_ORDER).orderBy("seq").limit(chunk).execute()) as Row[];
    for (const row of rows) {
      if (group && !sameIdentity(group.row, row) && close()) return page;
      if (group) group.net += Number(row.sign);
      else group = { row, net: Number(row.sign) };
    }
    if (rows.length < chunk) {
      close();
      return page;
    }
    after = rows[rows.length - 1];
  }
}

async function referenceChangeTotals(
  db: Db,
  applicationId: number,
  lo: number,
  hi: number,
): Promise<{ plus: number; minus: number }> {
  if (hi === lo + 1) {
    const { added, removed } = await adjacentTotals(db, applicationId, hi);
    return { plus: added, minus: removed };
  }
  const range = await db
    .selectFrom("reference_range_totals")
    .select(["added", "removed"])
    .where("application_id", "=", applicationId)
    .where("hi", "=", hi)
    .where("lo", "=", lo)
    .executeTakeFirst();
  if (range) return { plus: Number(range.added), minus: Number(range.removed) };
  return countReferenceChanges(db, applicationId, lo, hi);
}

/** The totals counted from the log: every change in the range grouped per identity. */
export async function countReferenceChanges(
  db: Db,
  applicationId: number,
  lo: number,
  hi: number,
): Promise<{ plus: number; minus: number }> {
  const row = await db
    .selectFrom(changeGroups(db, applicationId, lo, hi).select(sql<number>`sum(sign)`.as("net")).as("g"))
    .select([
      sql<number>`coalesce(sum(case when g.net = 1 then 1 else 0 end), 0)`.as("plus"),
      sql<number>`coalesce(sum(case when g.net = -1 then 1 else 0 end), 0)`.as("minus"),
    ])
    .executeTakeFirstOrThrow();
  return { plus: Number(row.plus), minus: Number(row.minus) };
}
