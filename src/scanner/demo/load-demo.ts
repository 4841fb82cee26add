import { readFileSync } from "node:fs";
import type { Kysely } from "kysely";
import { applyOsvRecord, recomputeTouched } from "../../store/advisories.ts";
import { loadPublishedVersions } from "../../store/catalog.ts";
import { ingestAnalysis } from "../../store/ingest.ts";
import type { Database } from "../../store/schema.ts";
import { readOsvRecord } from "../advisories/osv-record.ts";
import {
  type AdvisoryInput,
  type AnalysisInput,
  type PublishedVersionInput,
  parsePackageKey,
} from "../analysis.ts";
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

export interface DemoLoadResult {
  applications: { name: string; analyses: number; skipped: boolean }[];
  packages: number;
  advisories: number;
}

/**
 * Loads the demo dataset (real public package versions, release dates and advisories; fictional
 * applications). Applications that already exist are left untouched, so loading twice is harmless.
 */
export async function loadDemo(db: Kysely<Database>): Promise<DemoLoadResult> {
  const versions = readJson<Record<string, PublishedVersionInput[]>>("package-versions.json");
  const advisories = readJson<AdvisoryInput[]>("advisories.json");
  const applications = readJson<DemoApplication[]>("applications.json");

  await db.transaction().execute(async (trx) => {
    for (const [key, list] of Object.entries(versions)) {
      const { ecosystem, name } = parsePackageKey(key);
      await loadPublishedVersions(trx, ecosystem, name, list);
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
  });

  const result: DemoLoadResult = {
    applications: [],
    packages: Object.keys(versions).length,
    advisories: advisories.length,
  };
  for (const application of applications) {
    const existing = await db
      .selectFrom("applications")
      .select("id")
      .where("name", "=", application.name)
      .executeTakeFirst();
    if (existing) {
      result.applications.push({ name: application.name, analyses: 0, skipped: true });
      continue;
    }
    for (const analysis of application.analyses) {
      await ingestAnalysis(db, application.name, analysis, {
        description: `${DEMO_LABEL}: ${application.description}`,
        demo: true,
      });
    }
    result.applications.push({
      name: application.name,
      analyses: application.analyses.length,
      skipped: false,
    });
  }
  return result;
}

export async function storeIsEmpty(db: Kysely<Database>): Promise<boolean> {
  const row = await db.selectFrom("applications").select("id").limit(1).executeTakeFirst();
  return !row;
}
