import { readFileSync } from "node:fs";
import type { Kysely } from "kysely";
import type { ReleaseDateSource } from "../../contracts/platform.ts";
import { ingestAnalysis, loadPublishedVersions, recomputeTouched } from "../../domain/package-facts.ts";
import { applyOsvRecord, noteAdvisoryImport } from "../../store/advisories.ts";
import { latestAnalyzedAt } from "../../store/applications.ts";
import {
  type AdvisoryInput,
  type AnalysisInput,
  type PublishedVersionInput,
  parsePackageKey,
} from "../../store/input-records.ts";
import type { Database } from "../../store/schema.ts";
import { readOsvRecord } from "../advisories/osv-record.ts";
import { demoOsvRecord } from "./osv-records.ts";

interface DemoApplication {
  name: string;
  description: string;
  analyses: AnalysisInput[];
}

/** The dataset ships as JSON beside this module's source (src/scanner/demo/). */
const dataUrl = (file: string) => new URL(`../../../src/scanner/demo/${file}`, import.meta.url);
const readJson = <T>(file: string): T => JSON.parse(readFileSync(dataUrl(file), "utf8")) as T;

export const DEMO_LABEL = "Demo data";

interface DemoLoadResult {
  applications: { name: string; analyses: number; skipped: boolean }[];
  packages: number;
  advisories: number;
}

/**
 * Loads the demo dataset (real public package versions, release dates and advisories; fictional
 * applications). Applications that already exist are left untouched, so loading twice is harmless,
 * except a demo application an interrupted load left incomplete, which is completed.
 */
export async function loadDemo(db: Kysely<Database>): Promise<DemoLoadResult> {
  const versions = readJson<Record<string, PublishedVersionInput[]>>("package-versions.json");
  const advisories = readJson<AdvisoryInput[]>("advisories.json");
  const applications = readJson<DemoApplication[]>("applications.json");

  await db.transaction().execute(async (trx) => {
    for (const [key, list] of Object.entries(versions)) {
      const { ecosystem, name } = parsePackageKey(key);
      await loadPublishedVersions(
        trx,
        ecosystem,
        name,
        list.map((v) => ({ ...v, releasedAtSource: demoDateSource(ecosystem, v.releasedAt) })),
      );
    }
    // The advisories go through the OSV import path, as `imaging advisories import` would take them.
    const touched = new Set<number>();
    for (const advisory of advisories) {
      const read = readOsvRecord(demoOsvRecord(advisory));
      if (read.kind !== "record") {
        throw new Error(
          `demo advisory ${advisory.id}: ${read.kind === "malformed" ? read.reason : read.kind}`,
        );
      }
      await applyOsvRecord(trx, read.record, touched);
    }
    await recomputeTouched(trx, touched);
    await noteAdvisoryImport(trx);
  });

  const result: DemoLoadResult = {
    applications: [],
    packages: Object.keys(versions).length,
    advisories: advisories.length,
  };
  for (const application of applications) {
    const existing = await db
      .selectFrom("applications")
      .select(["id", "demo"])
      .where("name", "=", application.name)
      .executeTakeFirst();
    // Each analysis is its own transaction: a load interrupted between two analyses left a demo
    // application with the first ones only, so this completes it with those after its latest.
    let latest = Number.NEGATIVE_INFINITY;
    if (existing?.demo) {
      const last = await latestAnalyzedAt(db, existing.id);
      latest = last !== undefined ? Date.parse(last) : latest;
    }
    const missing = existing?.demo
      ? application.analyses.filter((analysis) => Date.parse(analysis.analyzedAt) > latest)
      : existing
        ? []
        : application.analyses;
    if (missing.length === 0) {
      result.applications.push({ name: application.name, analyses: 0, skipped: true });
      continue;
    }
    for (const analysis of missing) {
      await ingestAnalysis(db, application.name, analysis, {
        description: `${DEMO_LABEL}: ${application.description}`,
        demo: true,
      });
    }
    result.applications.push({ name: application.name, analyses: missing.length, skipped: false });
  }
  return result;
}

/**
 * Where a demo date comes from (SOURCES.md): Maven dates are signature times; npm dates the registry's
 * publication times, or a day from release notes, recorded as midnight without milliseconds.
 */
function demoDateSource(ecosystem: "npm" | "maven", releasedAt: string | null): ReleaseDateSource | null {
  if (releasedAt === null) return null;
  if (ecosystem === "maven") return "signature";
  return /T00:00:00Z$/.test(releasedAt) ? "release-notes" : "registry";
}

/**
 * `start --demo` loads the demo data into an empty store, and completes it in a store that holds only
 * demo applications when an interrupted start left one of them without all its analyses.
 */
export async function demoLoadPending(db: Kysely<Database>): Promise<boolean> {
  const rows = await db
    .selectFrom("applications")
    .leftJoin("analyses", "analyses.application_id", "applications.id")
    .select(["applications.name", "applications.demo", (eb) => eb.fn.count("analyses.seq").as("analyses")])
    .groupBy(["applications.id", "applications.name", "applications.demo"])
    .execute();
  if (rows.length === 0) return true;
  if (rows.some((row) => !row.demo)) return false;
  const recorded = new Map(rows.map((row) => [row.name, Number(row.analyses)]));
  return readJson<DemoApplication[]>("applications.json").some(
    (application) => (recorded.get(application.name) ?? 0) < application.analyses.length,
  );
}
