/**
 * Recording one analysis: the use case behind `imaging scan` recording into its store and the REST
 * upload (`POST /rest/applications/{name}/analyses`). The order check, the packages' registry facts
 * (gathered first by the CLI, queued for the background by the upload), the ingest, and the counts of
 * what the analysis holds.
 */
import type { Kysely } from "kysely";
import { countAnalysis, findApplication, latestAnalyzedAt } from "../store/applications.ts";
import { type IngestResult, outOfOrder } from "../store/ingest.ts";
import type { AnalysisInput } from "../store/input-records.ts";
import type { Database } from "../store/schema.ts";
import { ingestAnalysis } from "./package-facts.ts";

/** A package whose published versions and release dates could not be read, and why. */
export interface MissingFacts {
  ecosystem: string;
  name: string;
  reason: string;
}

/**
 * Where the registry facts of the analysis's packages come from: a gatherer run before the analysis is
 * recorded (the CLI, which reads the registries itself), or "queued": the packages new to the platform
 * are looked up in the background once it is (the upload answers without waiting for registries).
 */
export type PackageFactsSource =
  | { gather(packages: AnalysisInput["packages"]): Promise<readonly MissingFacts[]> }
  | "queued";

export interface RecordedAnalysis extends IngestResult {
  /** What analysis `seq` holds, as the store counts it. */
  counts: Awaited<ReturnType<typeof countAnalysis>>;
  /** Packages whose facts the gatherer could not read (none when queued). */
  factsMissing: readonly MissingFacts[];
}

export async function recordAnalysis(
  db: Kysely<Database>,
  applicationName: string,
  input: AnalysisInput,
  facts: PackageFactsSource,
  progress?: (line: string) => void,
): Promise<RecordedAnalysis> {
  // Refused before any work: gathering facts can take minutes. The ingest checks again in its transaction,
  // which a concurrent recording may have overtaken.
  const existing = await findApplication(db, applicationName);
  const latest = existing && (await latestAnalyzedAt(db, existing.id));
  const time = Date.parse(input.analyzedAt); // a date that is none: the ingest says so
  if (latest !== undefined && !Number.isNaN(time) && latest >= new Date(time).toISOString())
    throw outOfOrder(applicationName, latest, new Date(time).toISOString());
  let factsMissing: readonly MissingFacts[] = [];
  if (facts !== "queued") {
    progress?.(`gathering package facts for ${input.packages.length} packages`);
    factsMissing = await facts.gather(input.packages);
  }
  progress?.("recording the analysis");
  const result = await ingestAnalysis(db, applicationName, input, { queueMissingFacts: facts === "queued" });
  // a new application was created by the ingest
  const applicationId = existing?.id ?? (await findApplication(db, applicationName))?.id;
  if (applicationId === undefined) throw new Error(`the application '${applicationName}' was not recorded`);
  return { ...result, counts: await countAnalysis(db, applicationId, result.seq), factsMissing };
}
