/**
 * OSV records in the store. An advisory (a row of `vulnerabilities`, keyed by its CVE id, else by the
 * record's id) gathers the records that name it; each record brings its own ranges, so a newer revision
 * of one record replaces exactly what that record brought, and a withdrawn record removes it (the
 * advisory goes when no record is left). Callers recompute the facts of the packages reported touched.
 */
import type { Kysely, Transaction } from "kysely";
import { detachAffectedFunctions, insertAffectedFunctions } from "./affected-functions.ts";
import { chunks } from "./batch.ts";
import { deleteRanges, ensurePackage, rangeColumns, recomputePackagesFacts } from "./catalog.ts";
import type { OsvRecordInput } from "./input-records.ts";
import { dropOccurrencesOf } from "./occurrence-model.ts";
import type { PackageFactsRule } from "./package-facts.ts";
import type { Database } from "./schema.ts";

type Db = Kysely<Database> | Transaction<Database>;

/**
 * imported: a record new to the store; updated: a newer revision replaced the stored one; unchanged: the
 * store already has this revision or a newer one; withdrawn: its withdrawal removed what it had brought;
 * skipped: withdrawn before the store ever had it.
 */
type RecordOutcome = "imported" | "updated" | "unchanged" | "withdrawn" | "skipped";

const SEVERITY_RANK: Record<string, number> = { CRITICAL: 4, HIGH: 3, MEDIUM: 2, LOW: 1 };

/**
 * Applies one record; adds the ids of packages whose facts must be recomputed to `touched`.
 * `packageIds` caches package ids by `<ecosystem>:<name>` across the records of one import.
 */
export async function applyOsvRecord(
  db: Db,
  record: OsvRecordInput,
  touched: Set<number>,
  packageIds: Map<string, number> = new Map(),
): Promise<RecordOutcome> {
  const stored = await db
    .selectFrom("advisory_records")
    .select(["id", "modified", "withdrawn", "vulnerability_id", "reference_urls"])
    .where("id", "=", record.osvId)
    .executeTakeFirst();
  if (stored && Date.parse(stored.modified) >= Date.parse(record.modified)) {
    if (stored.reference_urls === null) await fillReferences(db, [record]);
    return "unchanged";
  }
  const advisory = record.advisory;
  const row = {
    reference_urls: referencesJson(record),
    modified: record.modified,
    withdrawn: record.withdrawn ? 1 : 0,
    severity: advisory.severity.toUpperCase(),
    cvss_score: advisory.cvssScore,
    summary: advisory.summary,
    published_at: advisory.publishedAt,
    aliases: JSON.stringify(advisory.aliases),
  };
  // A revision under the same advisory key keeps the advisory row (and its id); otherwise it may go.
  const staying = record.withdrawn || advisory.affected.length === 0 ? null : advisory.id;
  if (stored) {
    await detachAffectedFunctions(db, record.osvId);
    await detachRecord(db, record.osvId, stored.vulnerability_id, staying, touched);
  }

  if (record.withdrawn || advisory.affected.length === 0) {
    const values = { ...row, vulnerability_id: null };
    if (stored) await db.updateTable("advisory_records").set(values).where("id", "=", record.osvId).execute();
    else
      await db
        .insertInto("advisory_records")
        .values({ id: record.osvId, ...values })
        .execute();
    if (!record.withdrawn) return "updated"; // its new revision names no npm or Maven package
    return stored && stored.withdrawn === 0 ? "withdrawn" : "skipped";
  }

  const { id: vulnerabilityId, created } = await ensureVulnerability(db, advisory.id, row);
  if (stored) {
    await db
      .updateTable("advisory_records")
      .set({ ...row, vulnerability_id: vulnerabilityId })
      .where("id", "=", record.osvId)
      .execute();
  } else {
    await db
      .insertInto("advisory_records")
      .values({ id: record.osvId, ...row, vulnerability_id: vulnerabilityId })
      .execute();
  }
  const ranges = [];
  for (const affected of advisory.affected) {
    const key = `${affected.ecosystem}:${affected.package}`;
    let packageId = packageIds.get(key);
    if (packageId === undefined) {
      packageId = await ensurePackage(db, affected.ecosystem, affected.package);
      packageIds.set(key, packageId);
    }
    touched.add(packageId);
    for (const range of affected.ranges) {
      ranges.push({
        vulnerability_id: vulnerabilityId,
        package_id: packageId,
        record_id: record.osvId,
        ...rangeColumns(range),
      });
    }
  }
  for (let i = 0; i < ranges.length; i += 200) {
    await db
      .insertInto("vulnerability_ranges")
      .values(ranges.slice(i, i + 200))
      .execute();
  }
  await insertAffectedFunctions(
    db,
    [{ recordId: record.osvId, vulnerabilityId, affected: advisory.affected }],
    packageIds,
  );
  if (created) {
    // A new advisory has this record only: its attributes are the record's, set at creation.
    await insertAliases(db, vulnerabilityId, advisory.aliases);
  } else {
    await refreshVulnerability(db, vulnerabilityId);
  }
  return stored ? "updated" : "imported";
}

/**
 * applyOsvRecord over many records, in order. Records new to the store under an advisory key nothing
 * else uses (the bulk of a first import) are written with a few statements for the whole list; the
 * others (revisions, withdrawals, advisories several records share) go one by one.
 */
export async function applyOsvRecords(
  db: Db,
  records: readonly OsvRecordInput[],
  touched: Set<number>,
  packageIds: Map<string, number> = new Map(),
): Promise<RecordOutcome[]> {
  const stored = new Map<string, string>();
  // Records stored before their references were kept (migration 022): an unchanged revision brings them.
  const withoutReferences = new Set<string>();
  for (const batch of chunks(
    records.map((r) => r.osvId),
    400,
  )) {
    const rows = await db
      .selectFrom("advisory_records")
      .select(["id", "modified", "reference_urls"])
      .where("id", "in", batch)
      .execute();
    for (const row of rows) {
      stored.set(row.id, row.modified);
      if (row.reference_urls === null) withoutReferences.add(row.id);
    }
  }
  const count = (values: string[]) => {
    const map = new Map<string, number>();
    for (const v of values) map.set(v, (map.get(v) ?? 0) + 1);
    return map;
  };
  const ids = count(records.map((r) => r.osvId));
  const keys = count(records.map((r) => r.advisory.id));
  let fresh = records.filter(
    (r) =>
      !stored.has(r.osvId) &&
      !r.withdrawn &&
      r.advisory.affected.length > 0 &&
      ids.get(r.osvId) === 1 &&
      keys.get(r.advisory.id) === 1,
  );
  const taken = new Set<string>();
  for (const batch of chunks(
    fresh.map((r) => r.advisory.id),
    400,
  )) {
    const rows = await db
      .selectFrom("vulnerabilities")
      .select("cve_id")
      .where("cve_id", "in", batch)
      .execute();
    for (const row of rows) taken.add(row.cve_id);
  }
  fresh = fresh.filter((r) => !taken.has(r.advisory.id));
  const bulk = new Set(fresh);
  await insertFresh(db, fresh, touched, packageIds);

  // A record stored at this revision or a newer one, and alone with its id here, is unchanged.
  const unchanged = (r: OsvRecordInput) => {
    const modified = stored.get(r.osvId);
    return modified !== undefined && ids.get(r.osvId) === 1 && Date.parse(modified) >= Date.parse(r.modified);
  };
  const outcomes: RecordOutcome[] = [];
  const toFill: OsvRecordInput[] = [];
  for (const record of records) {
    if (bulk.has(record)) outcomes.push("imported");
    else if (unchanged(record)) {
      outcomes.push("unchanged");
      if (withoutReferences.has(record.osvId)) toFill.push(record);
    } else outcomes.push(await applyOsvRecord(db, record, touched, packageIds));
  }
  await fillReferences(db, toFill);
  return outcomes;
}

async function insertFresh(
  db: Db,
  records: readonly OsvRecordInput[],
  touched: Set<number>,
  packageIds: Map<string, number>,
): Promise<void> {
  if (records.length === 0) return;
  // Packages: known ids, then the ones the store has, then new ones.
  const wanted = new Map<string, { ecosystem: string; name: string }>();
  for (const r of records) {
    for (const a of r.advisory.affected) {
      const key = `${a.ecosystem}:${a.package}`;
      if (!packageIds.has(key)) wanted.set(key, { ecosystem: a.ecosystem, name: a.package });
    }
  }
  for (const batch of chunks([...wanted.values()], 400)) {
    const rows = await db
      .selectFrom("packages")
      .select(["id", "ecosystem", "name"])
      .where(
        "name",
        "in",
        batch.map((p) => p.name),
      )
      .execute();
    for (const row of rows) {
      const key = `${row.ecosystem}:${row.name}`;
      if (wanted.has(key)) {
        packageIds.set(key, row.id);
        wanted.delete(key);
      }
    }
  }
  for (const batch of chunks([...wanted.values()], 400)) {
    const rows = await db
      .insertInto("packages")
      .values(batch.map((p) => ({ ...p, releases_per_year: null, safest_version: null })))
      .returning(["id", "ecosystem", "name"])
      .execute();
    for (const row of rows) packageIds.set(`${row.ecosystem}:${row.name}`, row.id);
  }

  const vulnerabilityIds = new Map<string, number>();
  for (const batch of chunks(records, 200)) {
    const rows = await db
      .insertInto("vulnerabilities")
      .values(
        batch.map((r) => ({
          cve_id: r.advisory.id,
          severity: r.advisory.severity.toUpperCase(),
          cvss_score: r.advisory.cvssScore,
          summary: r.advisory.summary,
          published_at: r.advisory.publishedAt,
        })),
      )
      .returning(["id", "cve_id"])
      .execute();
    for (const row of rows) vulnerabilityIds.set(row.cve_id, row.id);
  }
  const vulnerabilityOf = (r: OsvRecordInput) => vulnerabilityIds.get(r.advisory.id) as number;
  for (const batch of chunks(records, 200)) {
    await db
      .insertInto("advisory_records")
      .values(
        batch.map((r) => ({
          id: r.osvId,
          vulnerability_id: vulnerabilityOf(r),
          modified: r.modified,
          withdrawn: 0,
          severity: r.advisory.severity.toUpperCase(),
          cvss_score: r.advisory.cvssScore,
          summary: r.advisory.summary,
          published_at: r.advisory.publishedAt,
          aliases: JSON.stringify(r.advisory.aliases),
          reference_urls: referencesJson(r),
        })),
      )
      .execute();
  }
  const ranges = records.flatMap((r) =>
    r.advisory.affected.flatMap((a) => {
      const packageId = packageIds.get(`${a.ecosystem}:${a.package}`) as number;
      touched.add(packageId);
      return a.ranges.map((range) => ({
        vulnerability_id: vulnerabilityOf(r),
        package_id: packageId,
        record_id: r.osvId,
        ...rangeColumns(range),
      }));
    }),
  );
  for (const batch of chunks(ranges, 200))
    await db.insertInto("vulnerability_ranges").values(batch).execute();
  await insertAffectedFunctions(
    db,
    records.map((r) => ({
      recordId: r.osvId,
      vulnerabilityId: vulnerabilityOf(r),
      affected: r.advisory.affected,
    })),
    packageIds,
  );
  // One row per alias in a statement (PostgreSQL refuses to update a row twice in one upsert): the last wins.
  const aliases = new Map<string, number>();
  for (const r of records) for (const alias of r.advisory.aliases) aliases.set(alias, vulnerabilityOf(r));
  for (const batch of chunks([...aliases], 400)) {
    await db
      .insertInto("vulnerability_aliases")
      .values(batch.map(([alias, vulnerability_id]) => ({ alias, vulnerability_id })))
      .onConflict((oc) =>
        oc.column("alias").doUpdateSet((eb) => ({ vulnerability_id: eb.ref("excluded.vulnerability_id") })),
      )
      .execute();
  }
}

/** Recomputes the facts of the packages an import touched. */
export async function recomputeTouched(
  db: Db,
  touched: Iterable<number>,
  rule: PackageFactsRule,
): Promise<void> {
  await recomputePackagesFacts(db, touched, rule);
}

async function ensureVulnerability(
  db: Db,
  key: string,
  row: { severity: string; cvss_score: number | null; summary: string; published_at: string | null },
): Promise<{ id: number; created: boolean }> {
  const existing = await db
    .selectFrom("vulnerabilities")
    .select("id")
    .where("cve_id", "=", key)
    .executeTakeFirst();
  if (existing) return { id: existing.id, created: false };
  const inserted = await db
    .insertInto("vulnerabilities")
    .values({
      cve_id: key,
      severity: row.severity,
      cvss_score: row.cvss_score,
      summary: row.summary,
      published_at: row.published_at,
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  return { id: inserted.id, created: true };
}

/** Removes what a stored record brought: its ranges, and its advisory when no other source is left. */
async function detachRecord(
  db: Db,
  recordId: string,
  vulnerabilityId: number | null,
  staying: string | null,
  touched: Set<number>,
): Promise<void> {
  await deleteRanges(db, "record_id", recordId, touched);
  await db
    .updateTable("advisory_records")
    .set({ vulnerability_id: null })
    .where("id", "=", recordId)
    .execute();
  if (vulnerabilityId === null) return;
  const otherRecord = await db
    .selectFrom("advisory_records")
    .select("id")
    .where("vulnerability_id", "=", vulnerabilityId)
    .executeTakeFirst();
  const otherRange = await db
    .selectFrom("vulnerability_ranges")
    .select("id")
    .where("vulnerability_id", "=", vulnerabilityId)
    .executeTakeFirst();
  if (otherRecord || otherRange) {
    await refreshVulnerability(db, vulnerabilityId);
    return;
  }
  const row = await db
    .selectFrom("vulnerabilities")
    .select("cve_id")
    .where("id", "=", vulnerabilityId)
    .executeTakeFirst();
  if (!row || row.cve_id === staying) return;
  // Explicit deletes: SQLite enforces ON DELETE CASCADE only with foreign keys switched on.
  await db.deleteFrom("version_vulnerabilities").where("vulnerability_id", "=", vulnerabilityId).execute();
  await dropOccurrencesOf(db, vulnerabilityId);
  await db.deleteFrom("vulnerability_aliases").where("vulnerability_id", "=", vulnerabilityId).execute();
  await db.deleteFrom("vulnerabilities").where("id", "=", vulnerabilityId).execute();
}

/**
 * An advisory's attributes from the records naming it: the highest severity and score, the earliest
 * publication, the summary of the first record by id, every record id and alias as an alias.
 */
async function refreshVulnerability(db: Db, vulnerabilityId: number): Promise<void> {
  const records = await db
    .selectFrom("advisory_records")
    .select(["id", "severity", "cvss_score", "summary", "published_at", "aliases"])
    .where("vulnerability_id", "=", vulnerabilityId)
    .orderBy("id")
    .execute();
  if (records.length === 0) return;
  const vulnerability = await db
    .selectFrom("vulnerabilities")
    .select("cve_id")
    .where("id", "=", vulnerabilityId)
    .executeTakeFirstOrThrow();
  const rank = (s: string) => SEVERITY_RANK[s] ?? 0;
  const severity = records.map((r) => r.severity).reduce((a, b) => (rank(b) > rank(a) ? b : a));
  const scores = records.map((r) => r.cvss_score).filter((s): s is number => s !== null);
  const published = records
    .map((r) => r.published_at)
    .filter((p): p is string => p !== null)
    .sort()[0];
  await db
    .updateTable("vulnerabilities")
    .set({
      severity,
      cvss_score: scores.length > 0 ? Math.max(...scores) : null,
      summary: records.find((r) => r.summary !== "")?.summary ?? "",
      published_at: published ?? null,
    })
    .where("id", "=", vulnerabilityId)
    .execute();
  const aliases = new Set<string>();
  for (const r of records) {
    aliases.add(r.id);
    for (const alias of JSON.parse(r.aliases) as string[]) aliases.add(alias);
  }
  aliases.delete(vulnerability.cve_id);
  await db.deleteFrom("vulnerability_aliases").where("vulnerability_id", "=", vulnerabilityId).execute();
  await insertAliases(db, vulnerabilityId, [...aliases]);
}

/** An alias names one advisory: the latest to claim it keeps it. */
async function insertAliases(db: Db, vulnerabilityId: number, aliases: readonly string[]): Promise<void> {
  if (aliases.length === 0) return;
  await db
    .insertInto("vulnerability_aliases")
    .values([...new Set(aliases)].map((alias) => ({ alias, vulnerability_id: vulnerabilityId })))
    .onConflict((oc) => oc.column("alias").doUpdateSet({ vulnerability_id: vulnerabilityId }))
    .execute();
}

const referencesJson = (record: OsvRecordInput) => JSON.stringify(record.advisory.references ?? []);

/** Writes the references of records whose stored revision predates them (left null by migration 022). */
async function fillReferences(db: Db, records: readonly OsvRecordInput[]): Promise<void> {
  for (const record of records) {
    await db
      .updateTable("advisory_records")
      .set({ reference_urls: referencesJson(record) })
      .where("id", "=", record.osvId)
      .where("reference_urls", "is", null)
      .execute();
  }
}

/** Records that advisories were imported now (the one row of advisory_import_state). */
export async function noteAdvisoryImport(db: Db, at: Date = new Date()): Promise<void> {
  const importedAt = at.toISOString();
  await db
    .insertInto("advisory_import_state")
    .values({ id: 1, imported_at: importedAt })
    .onConflict((oc) => oc.column("id").doUpdateSet({ imported_at: importedAt }))
    .execute();
}

/** When advisories were last imported (null: never, or only before migration 022) and how many the store holds. */
export async function advisoryImportState(db: Db): Promise<{ importedAt: string | null; records: number }> {
  const state = await db
    .selectFrom("advisory_import_state")
    .select("imported_at")
    .where("id", "=", 1)
    .executeTakeFirst();
  // Advisories loaded without an OSV record (tests, earlier versions) count as imported too.
  const { n } = await db
    .selectFrom("vulnerabilities")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .executeTakeFirstOrThrow();
  return { importedAt: state?.imported_at ?? null, records: Number(n) };
}
