import type { Kysely } from "kysely";
import { countAnalysis } from "./applications.ts";
import type { Database } from "./schema.ts";
import { liveAt } from "./sql-helpers.ts";
import { severitySqlRank } from "./vulnerabilities.ts";

/** Vulnerable package versions of one analysis, each counted once under its most severe CVE. */
interface SeverityCounts {
  CRITICAL: number;
  HIGH: number;
  MEDIUM: number;
  LOW: number;
  UNKNOWN: number;
}

interface AnalysisHistoryEntry {
  seq: number;
  analyzedAt: string;
  counts: Awaited<ReturnType<typeof countAnalysis>>;
  vulnerablePackagesBySeverity: SeverityCounts;
}

const BY_RANK = ["UNKNOWN", "LOW", "MEDIUM", "HIGH", "CRITICAL"] as const;

/**
 * The analyses of an application, oldest first, each with its counts and its vulnerable packages by
 * severity: the data of the console's timeline and chart, read per analysis as `countAnalysis` does.
 */
export async function analysisHistory(
  db: Kysely<Database>,
  applicationId: number,
  page: { limit: number; skip: number },
): Promise<AnalysisHistoryEntry[]> {
  const analyses = await db
    .selectFrom("analyses")
    .select(["seq", "analyzed_at"])
    .where("application_id", "=", applicationId)
    .orderBy("seq")
    .limit(page.limit)
    .offset(page.skip)
    .execute();
  const entries: AnalysisHistoryEntry[] = [];
  for (const analysis of analyses) {
    const ranks = await db
      .selectFrom("application_packages as ap")
      .innerJoin("version_vulnerabilities as vv", "vv.package_version_id", "ap.package_version_id")
      .innerJoin("vulnerabilities as v", "v.id", "vv.vulnerability_id")
      .select((eb) => ["ap.package_version_id", eb.fn.max(severitySqlRank).as("rank")])
      .where("ap.application_id", "=", applicationId)
      .where(liveAt("ap", analysis.seq))
      .groupBy("ap.package_version_id")
      .execute();
    const bySeverity: SeverityCounts = { CRITICAL: 0, HIGH: 0, MEDIUM: 0, LOW: 0, UNKNOWN: 0 };
    for (const r of ranks) bySeverity[BY_RANK[Number(r.rank)] ?? "UNKNOWN"] += 1;
    entries.push({
      seq: analysis.seq,
      analyzedAt: analysis.analyzed_at,
      counts: await countAnalysis(db, applicationId, analysis.seq),
      vulnerablePackagesBySeverity: bySeverity,
    });
  }
  return entries;
}
