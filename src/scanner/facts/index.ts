/**
 * Package facts for scanned packages: each package's published versions and release dates from its
 * registry (npm packument, Maven metadata + signatures), stored through catalog.loadPublishedVersions,
 * which recomputes the facts (version order, affected versions, safer/safest versions, cadence).
 * Registry requests run concurrently (bounded); the store is written one package at a time.
 */

import type { Kysely } from "kysely";
import { loadPublishedVersions } from "../../domain/package-facts.ts";
import type { Ecosystem } from "../../domain/versions/index.ts";
import { lockPackageWrites } from "../../store/package-facts-queue.ts";
import type { Database } from "../../store/schema.ts";
import type { RegistryFetcher } from "../registry/cached-fetch.ts";
import type { VersionsLookup } from "./lookup.ts";
import { mavenVersions } from "./maven.ts";
import { npmVersions } from "./npm.ts";

export interface FactsOptions {
  fetcher: RegistryFetcher;
  npmRegistryUrl: string;
  mavenRepositoryUrl: string;
  /** The fetcher answers from its cache only; packages never fetched are reported missing. */
  offline: boolean;
  progress?: (message: string) => void;
  /** Packages looked up at once (default 8). */
  concurrency?: number;
  /** Only packages the store has no published versions for (what the REST API does for uploads). */
  onlyMissing?: boolean;
}

interface MissingFacts {
  ecosystem: Ecosystem;
  name: string;
  reason: string;
}

interface FactsResult {
  withFacts: number;
  missing: MissingFacts[];
}

export async function gatherPackageFacts(
  db: Kysely<Database>,
  packages: readonly { ecosystem: Ecosystem; name: string; version?: string }[],
  options: FactsOptions,
): Promise<FactsResult> {
  const unique = new Map<string, { ecosystem: Ecosystem; name: string }>();
  for (const p of packages) unique.set(`${p.ecosystem}:${p.name}`, { ecosystem: p.ecosystem, name: p.name });
  let wanted = [...unique.values()];
  if (options.onlyMissing) wanted = await withoutFacts(db, wanted);
  if (wanted.length === 0) return { withFacts: 0, missing: [] };

  options.progress?.(`facts: looking up ${wanted.length} packages`);
  let done = 0;
  const lookups = await mapBounded(wanted, options.concurrency ?? 8, async (p) => {
    const lookup =
      p.ecosystem === "npm"
        ? await npmVersions(options.fetcher, options.npmRegistryUrl, p.name)
        : await mavenVersions(options.fetcher, options.mavenRepositoryUrl, p.name);
    done++;
    if (done % 50 === 0) options.progress?.(`facts: ${done}/${wanted.length} packages looked up`);
    return lookup;
  });

  const result: FactsResult = { withFacts: 0, missing: [] };
  for (const [i, p] of wanted.entries()) {
    const lookup = lookups[i] as VersionsLookup;
    if (lookup.kind === "ok" && lookup.versions.length > 0) {
      await db.transaction().execute(async (trx) => {
        await lockPackageWrites(trx, "exclusive");
        await loadPublishedVersions(trx, p.ecosystem, p.name, lookup.versions);
      });
      result.withFacts++;
    } else {
      result.missing.push({ ...p, reason: reasonOf(lookup, options.offline) });
    }
  }
  return result;
}

function reasonOf(lookup: VersionsLookup, offline: boolean): string {
  switch (lookup.kind) {
    case "ok":
      return "the registry lists no version";
    case "not-found":
      return "not in the registry";
    case "not-cached":
      return offline ? "offline, and never fetched before" : "not cached";
    case "failed":
      return lookup.reason;
  }
}

async function withoutFacts(
  db: Kysely<Database>,
  packages: { ecosystem: Ecosystem; name: string }[],
): Promise<{ ecosystem: Ecosystem; name: string }[]> {
  const known = new Set<string>();
  for (let i = 0; i < packages.length; i += 400) {
    const names = packages.slice(i, i + 400).map((p) => p.name);
    const rows = await db
      .selectFrom("packages as p")
      .innerJoin("package_versions as pv", "pv.package_id", "p.id")
      .select(["p.ecosystem", "p.name"])
      .distinct()
      .where("p.name", "in", names)
      .where("pv.published", "=", 1)
      .execute();
    for (const r of rows) known.add(`${r.ecosystem}:${r.name}`);
  }
  return packages.filter((p) => !known.has(`${p.ecosystem}:${p.name}`));
}

async function mapBounded<T, R>(
  items: readonly T[],
  size: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(size, items.length) }, worker));
  return results;
}
