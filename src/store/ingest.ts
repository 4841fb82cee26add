import { type Kysely, type Selectable, SqliteAdapter, sql, type Transaction } from "kysely";
import { chunks } from "./batch.ts";
import { ensurePackage, recomputePackagesFacts } from "./catalog.ts";
import { nowIso } from "./clock.ts";
import { recordChanges, recordRangeTotals } from "./compare.ts";
import {
  type AnalysisInput,
  type ApplicationObjectInput,
  type ExternalObjectInput,
  packageKey,
  parsePackageKey,
} from "./input-records.ts";
import { toUtcSeconds } from "./insights.ts";
import { objectVersion } from "./object-versions.ts";
import {
  closeOccurrencePackages,
  diffOccurrenceObjects,
  openOccurrencePackages,
} from "./occurrence-model.ts";
import type { PackageFactsRule } from "./package-facts.ts";
import { lockPackageWrites, queueMissingFacts } from "./package-facts-queue.ts";
import {
  type ApplicationObjectsTable,
  type Database,
  type ExternalObjectsTable,
  OPEN_SEQ,
} from "./schema.ts";

export class IngestError extends Error {
  override name = "IngestError";
  /** `out-of-order`: the date is not after the application's latest analysis (a conflict, not bad input). */
  readonly reason: "invalid" | "out-of-order";
  constructor(message: string, reason: "invalid" | "out-of-order" = "invalid") {
    super(message);
    this.reason = reason;
  }
}

export interface ChangeCount {
  added: number;
  removed: number;
}

export interface IngestResult {
  application: string;
  seq: number;
  analyzedAt: string;
  packages: ChangeCount;
  objects: ChangeCount;
  references: ChangeCount;
}

export interface IngestOptions {
  description?: string;
  demo?: boolean;
  /**
   * Queue the packages without published versions for a background lookup of their registry facts
   * (package-facts-queue.ts), in the analysis's own transaction: uploads do, so that a restart between
   * the answer and the lookups loses nothing.
   */
  queueMissingFacts?: boolean;
}

/**
 * An analysis dated at or before its application's latest one: refused, as analyses are recorded in time
 * order. The same words wherever it is found (the early check of domain/record-analysis.ts, or this
 * transaction, which a concurrent recording may have overtaken).
 */
export function outOfOrder(applicationName: string, latest: string, analyzedAt: string): IngestError {
  return new IngestError(
    `Application '${applicationName}' already has an analysis at ${toUtcSeconds(latest)}: ` +
      `an analysis dated ${toUtcSeconds(analyzedAt)} must come later`,
    "out-of-order",
  );
}
/**
 * Records an analysis as the difference from the application's previous one: rows that did not change
 * stay as they are, vanished rows are closed at this analysis, new ones open at it.
 */
export async function ingestAnalysis(
  db: Kysely<Database>,
  applicationName: string,
  input: AnalysisInput,
  options: IngestOptions,
  rule: PackageFactsRule,
): Promise<IngestResult> {
  const analyzedAt = validateAnalysis(applicationName, input);
  const result = await db.transaction().execute(async (trx) => {
    await lockPackageWrites(trx, "shared");
    const applicationId = await ensureApplication(trx, applicationName, options);
    const last = await trx
      .selectFrom("analyses")
      .select(["seq", "analyzed_at"])
      .where("application_id", "=", applicationId)
      .orderBy("seq", "desc")
      .limit(1)
      .executeTakeFirst();
    if (last && last.analyzed_at >= analyzedAt)
      throw outOfOrder(applicationName, last.analyzed_at, analyzedAt);
    const seq = (last?.seq ?? 0) + 1;
    await trx
      .insertInto("analyses")
      .values({ application_id: applicationId, seq, analyzed_at: analyzedAt, created_at: nowIso() })
      .execute();

    const packageIds = await resolvePackages(trx, input);
    if (options.queueMissingFacts) await queueMissingFacts(trx, packageIds.values(), Date.now());
    const { versionIds, ...packages } = await diffPackages(trx, applicationId, seq, input, packageIds, rule);
    // Each object's package version row: the version the referring code loads (object-versions.ts).
    const versionOf = new Map<string, number>();
    for (const o of input.objects) {
      const version = objectVersion(o, versionsOf(input, o.package)) as { version: string };
      versionOf.set(o.id, versionIds.get(`${o.package}@${version.version}`) as number);
    }
    const external = await diffExternalObjects(trx, applicationId, seq, input.objects, packageIds, versionOf);
    const sources = await diffApplicationObjects(trx, applicationId, seq, input);
    const references = await diffReferences(trx, applicationId, seq, input, external.rowIds, sources.rowIds);
    await diffOccurrenceObjects(
      trx,
      applicationId,
      seq,
      input.objects,
      versionOf,
      new Set(input.references.map((r) => r.to)),
      external.replaced,
    );
    await recordChanges(trx, applicationId, seq);
    await recordRangeTotals(trx, applicationId, seq);
    return {
      application: applicationName,
      seq,
      analyzedAt,
      packages,
      objects: external.count,
      references,
    };
  });
  await refreshStatistics(db);
  return result;
}

/**
 * An analysis changes many rows at once: refresh the planner's statistics so the interval queries keep
 * their indexed plans. SQLite only gathers them when asked, and `PRAGMA optimize` samples too little
 * here (docs/benchmarks-history.md: 260 ms instead of 22 ms); a full ANALYZE takes about a second for two
 * million rows. PostgreSQL's autovacuum analyzes by itself.
 */
async function refreshStatistics(db: Kysely<Database>): Promise<void> {
  if (db.getExecutor().adapter instanceof SqliteAdapter) await sql`ANALYZE`.execute(db);
}

function validateAnalysis(applicationName: string, input: AnalysisInput): string {
  if (!applicationName || applicationName.includes("`")) {
    throw new IngestError(`Application name "${applicationName}" is empty or contains a back-quote`);
  }
  const instant = new Date(input.analyzedAt);
  if (Number.isNaN(instant.getTime()) || !/T/.test(input.analyzedAt)) {
    throw new IngestError(`analyzedAt "${input.analyzedAt}" is not an ISO 8601 date-time`);
  }
  const used = new Set(input.packages.map((p) => packageKey(p.ecosystem, p.name)));
  const ids = new Set<string>();
  for (const object of input.objects) {
    if (ids.has(object.id)) throw new IngestError(`External object id ${object.id} appears twice`);
    ids.add(object.id);
    if (!used.has(object.package)) {
      throw new IngestError(
        `External object ${object.id} belongs to ${object.package}, which the analysis does not use`,
      );
    }
    const versions = versionsOf(input, object.package);
    const version = objectVersion(object, versions);
    if (!version.ok) {
      throw new IngestError(
        version.reason === "not-used"
          ? `External object ${object.id} belongs to ${object.package} ${object.version}, a version the analysis does not use (${versions.join(", ")})`
          : `External object ${object.id} belongs to ${object.package}, which the analysis uses at several versions (${versions.join(", ")}): its version must be given`,
      );
    }
  }
  const sources = new Map<string, ApplicationObjectInput>();
  for (const reference of input.references) {
    if (!ids.has(reference.to)) {
      throw new IngestError(
        `A reference from ${reference.from.id} points to unknown external object ${reference.to}`,
      );
    }
    const seen = sources.get(reference.from.id);
    if (seen && !sameSource(seen, reference.from)) {
      throw new IngestError(
        `Application object ${reference.from.id} is described twice with different attributes`,
      );
    }
    sources.set(reference.from.id, reference.from);
  }
  return instant.toISOString();
}

/** The versions of a package (`<ecosystem>:<name>`) the analysis lists. */
function versionsOf(input: AnalysisInput, key: string): string[] {
  return [
    ...new Set(input.packages.filter((p) => packageKey(p.ecosystem, p.name) === key).map((p) => p.version)),
  ];
}

async function ensureApplication(
  trx: Transaction<Database>,
  name: string,
  options: IngestOptions,
): Promise<number> {
  const existing = await trx
    .selectFrom("applications")
    .select("id")
    .where("name", "=", name)
    .executeTakeFirst();
  if (existing) return existing.id;
  const row = await trx
    .insertInto("applications")
    .values({
      name,
      description: options.description ?? "",
      demo: options.demo ? 1 : 0,
      created_at: nowIso(),
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  return row.id;
}

/** Package ids by `<ecosystem>:<name>`, creating packages and in-use versions the catalog lacks. */
async function resolvePackages(
  trx: Transaction<Database>,
  input: AnalysisInput,
): Promise<Map<string, number>> {
  const ids = new Map<string, number>();
  for (const p of input.packages) {
    const key = packageKey(p.ecosystem, p.name);
    if (!ids.has(key)) ids.set(key, await ensurePackage(trx, p.ecosystem, p.name));
  }
  for (const key of new Set(input.objects.map((o) => o.package))) {
    if (!ids.has(key)) {
      const { ecosystem, name } = parsePackageKey(key);
      ids.set(key, await ensurePackage(trx, ecosystem, name));
    }
  }
  return ids;
}

/**
 * The analysis's package versions against the open application_packages rows: a version no longer used is
 * closed, a new one opened, and one whose scope changed is closed and opened again with its new scope
 * (counted neither as added nor as removed). Returns the version rows by `<ecosystem>:<name>@<version>`.
 */
async function diffPackages(
  trx: Transaction<Database>,
  applicationId: number,
  seq: number,
  input: AnalysisInput,
  packageIds: Map<string, number>,
  rule: PackageFactsRule,
): Promise<ChangeCount & { versionIds: Map<string, number> }> {
  const wanted = new Map<number, string | null>();
  const versionIds = new Map<string, number>();
  // The package of each version in use: application_packages carries its name for the packages list.
  const packageOf = new Map<number, { name: string; ecosystem: string }>();
  const sourcesOf = new Map<number, Set<string>>();
  const recompute = new Set<number>();
  for (const p of input.packages) {
    const packageId = packageIds.get(packageKey(p.ecosystem, p.name)) as number;
    let row = await trx
      .selectFrom("package_versions")
      .select("id")
      .where("package_id", "=", packageId)
      .where("version", "=", p.version)
      .executeTakeFirst();
    if (!row) {
      // A version in use that the registry data does not list yet: kept, flagged unpublished.
      row = await trx
        .insertInto("package_versions")
        .values({
          package_id: packageId,
          version: p.version,
          released_at: null,
          released_at_source: null,
          published: 0,
          prerelease: 0,
          rank: 0,
          safer_closest_version: null,
        })
        .returning("id")
        .executeTakeFirstOrThrow();
      recompute.add(packageId);
    }
    // A version listed twice keeps the first scope stated.
    wanted.set(row.id, wanted.get(row.id) ?? p.scope ?? null);
    versionIds.set(`${packageKey(p.ecosystem, p.name)}@${p.version}`, row.id);
    packageOf.set(row.id, { name: p.name, ecosystem: p.ecosystem });
    if (p.sources && p.sources.length > 0) {
      const sources = sourcesOf.get(row.id) ?? new Set<string>();
      for (const source of p.sources) sources.add(source);
      sourcesOf.set(row.id, sources);
    }
  }
  await diffPackageSources(trx, applicationId, seq, sourcesOf);
  await recomputePackagesFacts(trx, recompute, rule);

  const open = await trx
    .selectFrom("application_packages")
    .select(["id", "package_version_id", "scope"])
    .where("application_id", "=", applicationId)
    .where("to_seq", "=", OPEN_SEQ)
    .execute();
  const openVersions = new Set(open.map((r) => r.package_version_id));
  const closing = open.filter(
    (r) => !wanted.has(r.package_version_id) || wanted.get(r.package_version_id) !== r.scope,
  );
  await closeRows(
    trx,
    "application_packages",
    closing.map((r) => r.id),
    seq,
  );
  await closeOccurrencePackages(
    trx,
    applicationId,
    closing.map((r) => r.package_version_id),
    seq,
  );
  const closed = new Set(closing);
  const kept = new Set(open.filter((r) => !closed.has(r)).map((r) => r.package_version_id));
  const opening = [...wanted.keys()].filter((id) => !kept.has(id));
  for (const batch of chunks(opening)) {
    await trx
      .insertInto("application_packages")
      .values(
        batch.map((package_version_id) => ({
          application_id: applicationId,
          package_version_id,
          package_name: packageOf.get(package_version_id)?.name as string,
          package_ecosystem: packageOf.get(package_version_id)?.ecosystem as string,
          scope: wanted.get(package_version_id) ?? null,
          from_seq: seq,
          to_seq: OPEN_SEQ,
        })),
      )
      .execute();
  }
  await openOccurrencePackages(trx, applicationId, opening, seq);
  return {
    added: [...wanted.keys()].filter((id) => !openVersions.has(id)).length,
    removed: closing.filter((r) => !wanted.has(r.package_version_id)).length,
    versionIds,
  };
}

/** The inputs of each package version (package_sources, migration 023): rows change only when they do. */
async function diffPackageSources(
  trx: Transaction<Database>,
  applicationId: number,
  seq: number,
  sourcesOf: ReadonlyMap<number, ReadonlySet<string>>,
): Promise<void> {
  const wanted = new Map<number, string>();
  for (const [versionId, sources] of sourcesOf) wanted.set(versionId, JSON.stringify([...sources].sort()));
  const open = await trx
    .selectFrom("package_sources")
    .select(["id", "package_version_id", "sources"])
    .where("application_id", "=", applicationId)
    .where("to_seq", "=", OPEN_SEQ)
    .execute();
  const closed: number[] = [];
  for (const row of open) {
    if (wanted.get(row.package_version_id) === row.sources) wanted.delete(row.package_version_id);
    else closed.push(row.id);
  }
  for (const batch of chunks(closed, 500)) {
    await trx.updateTable("package_sources").set({ to_seq: seq }).where("id", "in", batch).execute();
  }
  for (const batch of chunks([...wanted], 300)) {
    await trx
      .insertInto("package_sources")
      .values(
        batch.map(([package_version_id, sources]) => ({
          application_id: applicationId,
          package_version_id,
          sources,
          from_seq: seq,
          to_seq: OPEN_SEQ,
        })),
      )
      .execute();
  }
}

async function diffExternalObjects(
  trx: Transaction<Database>,
  applicationId: number,
  seq: number,
  objects: readonly ExternalObjectInput[],
  packageIds: Map<string, number>,
  versionOf: ReadonlyMap<string, number>,
): Promise<{ count: ChangeCount; rowIds: Map<string, number>; replaced: Set<string> }> {
  const open = await trx
    .selectFrom("external_objects")
    .select([
      "id",
      "object_id",
      "package_id",
      "package_version_id",
      "name",
      "full_name",
      "mangling",
      "type",
      "type_id",
    ])
    .where("application_id", "=", applicationId)
    .where("to_seq", "=", OPEN_SEQ)
    .execute();
  // Keyed by id and version: a store migrated by 021 may hold one id at two versions (object-versions.ts).
  const key = (objectId: string, versionId: number | undefined) => `${objectId}\u0000${versionId}`;
  const openById = new Map(open.map((r) => [key(r.object_id, r.package_version_id), r]));
  const rowIds = new Map<string, number>();
  const toInsert: Omit<ExternalObjectRow, "id">[] = [];
  for (const o of objects) {
    const packageId = packageIds.get(o.package) as number;
    const versionId = versionOf.get(o.id) as number;
    const row = openById.get(key(o.id, versionId));
    if (
      row &&
      row.package_id === packageId &&
      row.name === o.name &&
      row.full_name === o.fullName &&
      row.mangling === o.mangling &&
      row.type === o.type &&
      row.type_id === o.typeId
    ) {
      rowIds.set(o.id, row.id);
      openById.delete(key(o.id, versionId));
      continue;
    }
    toInsert.push({
      application_id: applicationId,
      package_id: packageId,
      package_version_id: versionId,
      object_id: o.id,
      name: o.name,
      full_name: o.fullName,
      mangling: o.mangling,
      type: o.type,
      type_id: o.typeId,
      from_seq: seq,
      to_seq: OPEN_SEQ,
    });
  }
  // Whatever is still open and was not matched has vanished or changed: close it.
  const closed = [...openById.values()].map((r) => r.id);
  await closeRows(trx, "external_objects", closed, seq);
  for (const batch of chunks(toInsert, 300)) {
    const inserted = await trx
      .insertInto("external_objects")
      .values(batch)
      .returning(["id", "object_id"])
      .execute();
    for (const r of inserted) rowIds.set(r.object_id, r.id);
  }
  return {
    count: { added: toInsert.length, removed: closed.length },
    rowIds,
    replaced: new Set(toInsert.map((o) => o.object_id)),
  };
}

type ExternalObjectRow = Selectable<ExternalObjectsTable>;

async function diffApplicationObjects(
  trx: Transaction<Database>,
  applicationId: number,
  seq: number,
  input: AnalysisInput,
): Promise<{ rowIds: Map<string, number> }> {
  const sources = new Map<string, ApplicationObjectInput>();
  for (const r of input.references) sources.set(r.from.id, r.from);
  const open = await trx
    .selectFrom("application_objects")
    .select(["id", "object_id", "name", "full_name", "type", "type_id"])
    .where("application_id", "=", applicationId)
    .where("to_seq", "=", OPEN_SEQ)
    .execute();
  const openById = new Map(open.map((r) => [r.object_id, r]));
  const rowIds = new Map<string, number>();
  const toInsert: Omit<Selectable<ApplicationObjectsTable>, "id">[] = [];
  for (const s of sources.values()) {
    const row = openById.get(s.id);
    if (
      row &&
      sameSource(
        { id: row.object_id, name: row.name, fullName: row.full_name, type: row.type, typeId: row.type_id },
        s,
      )
    ) {
      rowIds.set(s.id, row.id);
      openById.delete(s.id);
      continue;
    }
    toInsert.push({
      application_id: applicationId,
      object_id: s.id,
      name: s.name,
      full_name: s.fullName,
      type: s.type,
      type_id: s.typeId,
      from_seq: seq,
      to_seq: OPEN_SEQ,
    });
  }
  await closeRows(
    trx,
    "application_objects",
    [...openById.values()].map((r) => r.id),
    seq,
  );
  for (const batch of chunks(toInsert, 400)) {
    const inserted = await trx
      .insertInto("application_objects")
      .values(batch)
      .returning(["id", "object_id"])
      .execute();
    for (const r of inserted) rowIds.set(r.object_id, r.id);
  }
  return { rowIds };
}

async function diffReferences(
  trx: Transaction<Database>,
  applicationId: number,
  seq: number,
  input: AnalysisInput,
  targets: Map<string, number>,
  sources: Map<string, number>,
): Promise<ChangeCount> {
  const wanted = new Map<string, { source_id: number; target_id: number }>();
  for (const r of input.references) {
    const source_id = sources.get(r.from.id) as number;
    const target_id = targets.get(r.to) as number;
    wanted.set(`${source_id}>${target_id}`, { source_id, target_id });
  }
  const open = await trx
    .selectFrom("object_references")
    .select(["id", "source_id", "target_id"])
    .where("application_id", "=", applicationId)
    .where("to_seq", "=", OPEN_SEQ)
    .execute();
  const closed: number[] = [];
  for (const r of open) {
    const key = `${r.source_id}>${r.target_id}`;
    if (wanted.has(key)) wanted.delete(key);
    else closed.push(r.id);
  }
  await closeRows(trx, "object_references", closed, seq);
  const added = [...wanted.values()];
  for (const batch of chunks(added, 500)) {
    await trx
      .insertInto("object_references")
      .values(batch.map((r) => ({ application_id: applicationId, ...r, from_seq: seq, to_seq: OPEN_SEQ })))
      .execute();
  }
  return { added: added.length, removed: closed.length };
}

type IntervalTable =
  | "application_packages"
  | "external_objects"
  | "application_objects"
  | "object_references";

async function closeRows(
  trx: Transaction<Database>,
  table: IntervalTable,
  ids: number[],
  seq: number,
): Promise<void> {
  for (const batch of chunks(ids, 500)) {
    await trx.updateTable(table).set({ to_seq: seq }).where("id", "in", batch).execute();
  }
}

function sameSource(a: ApplicationObjectInput, b: ApplicationObjectInput): boolean {
  return a.name === b.name && a.fullName === b.fullName && a.type === b.type && a.typeId === b.typeId;
}
