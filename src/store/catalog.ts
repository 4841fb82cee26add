import { type Kysely, sql, type Transaction } from "kysely";
import { chunks } from "./batch.ts";
import type { AdvisoryInput, AffectedRange, Ecosystem, PublishedVersionInput } from "./input-records.ts";
import { refreshOccurrencePackages } from "./occurrence-model.ts";
import type { PackageAdvisory, PackageFactsRule } from "./package-facts.ts";
import type { Database } from "./schema.ts";

type Db = Kysely<Database> | Transaction<Database>;

/** Returns the package id, creating the package when it is new. */
export async function ensurePackage(db: Db, ecosystem: Ecosystem, name: string): Promise<number> {
  const existing = await db
    .selectFrom("packages")
    .select("id")
    .where("ecosystem", "=", ecosystem)
    .where("name", "=", name)
    .executeTakeFirst();
  if (existing) return existing.id;
  const inserted = await db
    .insertInto("packages")
    .values({ ecosystem, name, releases_per_year: null, safest_version: null })
    .returning("id")
    .executeTakeFirstOrThrow();
  return inserted.id;
}

/**
 * Records a package's published versions (from its registry) and recomputes its facts. Returns the
 * package id.
 */
export async function loadPublishedVersions(
  db: Db,
  ecosystem: Ecosystem,
  name: string,
  versions: readonly PublishedVersionInput[],
  rule: PackageFactsRule,
): Promise<number> {
  const packageId = await ensurePackage(db, ecosystem, name);
  const known = new Map(
    (
      await db
        .selectFrom("package_versions")
        .select(["id", "version", "released_at", "released_at_source", "published"])
        .where("package_id", "=", packageId)
        .execute()
    ).map((row) => [row.version, row]),
  );
  const fresh = versions.filter((v) => !known.has(v.version));
  for (const batch of chunks(fresh)) {
    await db
      .insertInto("package_versions")
      .values(
        batch.map((v) => ({
          package_id: packageId,
          version: v.version,
          released_at: v.releasedAt,
          released_at_source: v.releasedAt === null ? null : (v.releasedAtSource ?? null),
          published: 1,
          prerelease: 0,
          rank: 0,
          safer_closest_version: null,
        })),
      )
      .execute();
  }
  for (const v of versions) {
    const row = known.get(v.version);
    const source = v.releasedAt === null ? null : (v.releasedAtSource ?? null);
    if (
      row &&
      (row.published !== 1 || row.released_at !== v.releasedAt || row.released_at_source !== source)
    ) {
      await db
        .updateTable("package_versions")
        .set({ published: 1, released_at: v.releasedAt, released_at_source: source })
        .where("id", "=", row.id)
        .execute();
    }
  }
  await recomputePackageFacts(db, packageId, rule);
  return packageId;
}

/**
 * loadPublishedVersions for several packages known by id, with a few queries for all of them and one
 * recomputation of their facts (the background look-ups of an upload store their results this way).
 */
export async function loadPublishedVersionsOfPackages(
  db: Db,
  items: readonly { packageId: number; versions: readonly PublishedVersionInput[] }[],
  rule: PackageFactsRule,
): Promise<void> {
  for (const batch of chunks(items, 200)) {
    const known = new Map<
      string,
      { id: number; released_at: string | null; released_at_source: string | null; published: number }
    >();
    const rows = await db
      .selectFrom("package_versions")
      .select(["id", "package_id", "version", "released_at", "released_at_source", "published"])
      .where(
        "package_id",
        "in",
        batch.map((i) => i.packageId),
      )
      .execute();
    for (const row of rows) known.set(`${row.package_id}\n${row.version}`, row);
    type Dated = { released_at: string | null; released_at_source: string | null };
    const fresh: ({ package_id: number; version: string } & Dated)[] = [];
    const changed: ({ id: number } & Dated)[] = [];
    for (const item of batch) {
      for (const v of item.versions) {
        // A date and where it comes from (issue 32 point 4): no source without a date.
        const dated = {
          released_at: v.releasedAt,
          released_at_source: v.releasedAt === null ? null : (v.releasedAtSource ?? null),
        };
        const row = known.get(`${item.packageId}\n${v.version}`);
        if (!row) fresh.push({ package_id: item.packageId, version: v.version, ...dated });
        else if (
          row.published !== 1 ||
          row.released_at !== dated.released_at ||
          row.released_at_source !== dated.released_at_source
        ) {
          changed.push({ id: row.id, ...dated });
        }
      }
    }
    for (const rows of chunks(fresh)) {
      await db
        .insertInto("package_versions")
        .values(
          rows.map((v) => ({
            ...v,
            published: 1,
            prerelease: 0,
            rank: 0,
            safer_closest_version: null,
          })),
        )
        .execute();
    }
    for (const row of changed) {
      await db
        .updateTable("package_versions")
        .set({ published: 1, released_at: row.released_at, released_at_source: row.released_at_source })
        .where("id", "=", row.id)
        .execute();
    }
    await recomputePackagesFacts(
      db,
      batch.map((i) => i.packageId),
      rule,
    );
  }
}

/** Inserts or replaces an advisory (by CVE id) and recomputes the facts of the packages it names. */
export async function loadAdvisory(db: Db, advisory: AdvisoryInput, rule: PackageFactsRule): Promise<number> {
  const existing = await db
    .selectFrom("vulnerabilities")
    .select("id")
    .where("cve_id", "=", advisory.id)
    .executeTakeFirst();
  const values = {
    severity: advisory.severity.toUpperCase(),
    cvss_score: advisory.cvssScore,
    summary: advisory.summary,
    published_at: advisory.publishedAt,
  };
  let vulnerabilityId: number;
  const touched = new Set<number>();
  if (existing) {
    vulnerabilityId = existing.id;
    await db.updateTable("vulnerabilities").set(values).where("id", "=", vulnerabilityId).execute();
    await deleteRanges(db, "vulnerability_id", vulnerabilityId, touched);
    await db.deleteFrom("vulnerability_aliases").where("vulnerability_id", "=", vulnerabilityId).execute();
  } else {
    vulnerabilityId = (
      await db
        .insertInto("vulnerabilities")
        .values({ cve_id: advisory.id, ...values })
        .returning("id")
        .executeTakeFirstOrThrow()
    ).id;
  }
  const aliases = [...new Set(advisory.aliases.filter((a) => a !== advisory.id))];
  if (aliases.length > 0) {
    await db
      .insertInto("vulnerability_aliases")
      .values(aliases.map((alias) => ({ alias, vulnerability_id: vulnerabilityId })))
      .onConflict((oc) => oc.column("alias").doUpdateSet({ vulnerability_id: vulnerabilityId }))
      .execute();
  }
  for (const affected of advisory.affected) {
    const packageId = await ensurePackage(db, affected.ecosystem, affected.package);
    touched.add(packageId);
    if (affected.ranges.length === 0) continue;
    await db
      .insertInto("vulnerability_ranges")
      .values(
        affected.ranges.map((r) => ({
          vulnerability_id: vulnerabilityId,
          package_id: packageId,
          ...rangeColumns(r),
        })),
      )
      .execute();
  }
  for (const packageId of touched) await recomputePackageFacts(db, packageId, rule);
  return vulnerabilityId;
}

/** The columns of one affected span (see AffectedRange): bounds, OSV limit, or one listed version. */
/** Deletes the vulnerability ranges a vulnerability or a stored record brought, noting their packages. */
export async function deleteRanges(
  db: Db,
  by: "vulnerability_id" | "record_id",
  value: number | string,
  touched: Set<number>,
): Promise<void> {
  const removed = await db
    .deleteFrom("vulnerability_ranges")
    .where(by, "=", value)
    .returning("package_id")
    .execute();
  for (const r of removed) touched.add(r.package_id);
}

export function rangeColumns(r: AffectedRange) {
  return {
    introduced: r.introduced ?? null,
    fixed: r.fixed ?? null,
    last_affected: r.lastAffected ?? null,
    limit_version: r.limit ?? null,
    listed_version: r.version ?? null,
  };
}

/**
 * Derives a package's facts from its versions and the advisories' ranges: version order, which
 * versions each vulnerability affects, safer closest / safest versions and releases per year.
 */
async function recomputePackageFacts(db: Db, packageId: number, rule: PackageFactsRule): Promise<void> {
  await recomputePackagesFacts(db, [packageId], rule);
}

/**
 * recomputePackageFacts for many packages with a few queries per chunk of packages (an advisory import
 * touches thousands): rows are read in bulk, and only what changed is written.
 */
export async function recomputePackagesFacts(
  db: Db,
  packageIds: Iterable<number>,
  rule: PackageFactsRule,
): Promise<void> {
  for (const ids of chunks([...new Set(packageIds)], 300)) {
    const packages = await db
      .selectFrom("packages")
      .select(["id", "ecosystem", "name", "releases_per_year", "safest_version"])
      .where("id", "in", ids)
      .execute();
    const versionsOf = groupBy(
      await db
        .selectFrom("package_versions")
        .select([
          "id",
          "package_id",
          "version",
          "released_at",
          "published",
          "rank",
          "prerelease",
          "safer_closest_version",
        ])
        .where("package_id", "in", ids)
        .execute(),
    );
    const rangesOf = groupBy(
      await db
        .selectFrom("vulnerability_ranges")
        .select([
          "package_id",
          "vulnerability_id",
          "introduced",
          "fixed",
          "last_affected",
          "limit_version",
          "listed_version",
        ])
        .where("package_id", "in", ids)
        .execute(),
    );
    const links: { package_version_id: number; vulnerability_id: number }[] = [];
    const versionIds: number[] = [];
    // Versions whose place in the page order moved: their occurrence rows are rebuilt.
    const reranked = new Set<number>();
    const versionFacts: VersionFacts[] = [];
    for (const pkg of packages) {
      const versions = versionsOf.get(pkg.id) ?? [];
      const byVulnerability = new Map<number, PackageAdvisory["ranges"][number][]>();
      for (const r of rangesOf.get(pkg.id) ?? []) {
        const list = byVulnerability.get(r.vulnerability_id) ?? [];
        list.push({
          introduced: r.introduced,
          fixed: r.fixed,
          lastAffected: r.last_affected,
          limit: r.limit_version,
          version: r.listed_version,
        });
        byVulnerability.set(r.vulnerability_id, list);
      }
      const advisories = [...byVulnerability].map(([id, list]) => ({ id: String(id), ranges: list }));
      const ecosystem = pkg.ecosystem as Ecosystem;
      const facts = rule.compute(
        ecosystem,
        versions
          .filter((v) => v.published === 1)
          .map((v) => ({ version: v.version, releasedAt: v.released_at })),
        advisories,
        versions.filter((v) => v.published !== 1).map((v) => v.version),
      );
      const factsByVersion = new Map(facts.versions.map((f) => [f.version, f]));
      for (const row of versions) {
        versionIds.push(row.id);
        // Versions that compare equal (1.0 and 1.0.0) share the facts of the one kept.
        const f =
          factsByVersion.get(row.version) ??
          facts.versions.find((x) => rule.compare(ecosystem, x.version, row.version) === 0);
        if (!f) continue;
        const prerelease = f.prerelease ? 1 : 0;
        if (row.rank !== f.rank) reranked.add(row.id);
        if (
          row.rank !== f.rank ||
          row.prerelease !== prerelease ||
          row.safer_closest_version !== f.saferClosestVersion
        ) {
          versionFacts.push({ id: row.id, rank: f.rank, prerelease, safer: f.saferClosestVersion });
        }
        for (const vulnerabilityId of f.affectedBy) {
          links.push({ package_version_id: row.id, vulnerability_id: Number(vulnerabilityId) });
        }
      }
      if (pkg.releases_per_year !== facts.releasesPerYear || pkg.safest_version !== facts.safestVersion) {
        await db
          .updateTable("packages")
          .set({ releases_per_year: facts.releasesPerYear, safest_version: facts.safestVersion })
          .where("id", "=", pkg.id)
          .execute();
      }
    }
    await setVersionFacts(db, versionFacts);
    // Only the versions whose vulnerabilities changed are rewritten, and their occurrences rebuilt.
    const key = (pairs: readonly { package_version_id: number; vulnerability_id: number }[]) => {
      const sets = new Map<number, number[]>();
      for (const p of pairs) {
        const list = sets.get(p.package_version_id);
        if (list) list.push(p.vulnerability_id);
        else sets.set(p.package_version_id, [p.vulnerability_id]);
      }
      return new Map([...sets].map(([id, list]) => [id, list.sort((a, b) => a - b).join(",")]));
    };
    const stored: { package_version_id: number; vulnerability_id: number }[] = [];
    for (const batch of chunks(versionIds, 500)) {
      const rows = await db
        .selectFrom("version_vulnerabilities")
        .select(["package_version_id", "vulnerability_id"])
        .where("package_version_id", "in", batch)
        .execute();
      for (const row of rows) stored.push(row);
    }
    const before = key(stored);
    const after = key(links);
    const changed = versionIds.filter((id) => before.get(id) !== after.get(id));
    const rewritten = new Set(changed);
    for (const batch of chunks(changed, 500)) {
      await db.deleteFrom("version_vulnerabilities").where("package_version_id", "in", batch).execute();
    }
    for (const batch of chunks(links.filter((l) => rewritten.has(l.package_version_id)))) {
      await db.insertInto("version_vulnerabilities").values(batch).execute();
    }
    await refreshOccurrencePackages(db, [...changed, ...reranked]);
  }
}

interface VersionFacts {
  id: number;
  rank: number;
  prerelease: number;
  safer: string | null;
}

/**
 * Writes the versions' changed facts, a statement per batch and not one per version: a package's first
 * facts change every one of its versions (the demo's 34 packages: 6,833 versions, each a round trip to
 * PostgreSQL). `update … from` a list of values, which both databases run (SQLite since 3.33).
 */
async function setVersionFacts(db: Db, rows: readonly VersionFacts[]): Promise<void> {
  for (const batch of chunks(rows, 500)) {
    const values = sql.join(
      batch.map(
        (r) =>
          sql`(cast(${r.id} as integer), cast(${r.rank} as integer), cast(${r.prerelease} as integer), cast(${r.safer} as text))`,
      ),
    );
    await sql`with facts (id, rank, prerelease, safer) as (values ${values})
      update package_versions set rank = facts.rank, prerelease = facts.prerelease,
        safer_closest_version = facts.safer
      from facts where package_versions.id = facts.id`.execute(db);
  }
}

function groupBy<T extends { package_id: number }>(rows: readonly T[]): Map<number, T[]> {
  const map = new Map<number, T[]>();
  for (const row of rows) {
    const list = map.get(row.package_id);
    if (list) list.push(row);
    else map.set(row.package_id, [row]);
  }
  return map;
}
