/**
 * The package-fact rule (version order, affected versions, safer closest and safest versions, release
 * cadence) and the store operations that must apply it: each writes versions, advisories or an analysis
 * and recomputes the facts of the packages it touched in the same transaction.
 */
import type { Kysely, Transaction } from "kysely";
import { recomputeTouched as storeRecompute } from "../store/advisories.ts";
import {
  loadAdvisory as storeAdvisory,
  loadPublishedVersions as storeVersions,
  loadPublishedVersionsOfPackages as storeVersionsOfPackages,
} from "../store/catalog.ts";
import {
  IngestError,
  type IngestOptions,
  type IngestResult,
  ingestAnalysis as storeAnalysis,
} from "../store/ingest.ts";
import type {
  AdvisoryInput,
  AnalysisInput,
  Ecosystem,
  PublishedVersionInput,
} from "../store/input-records.ts";
import type { PackageFactsRule } from "../store/package-facts.ts";
import type { Database } from "../store/schema.ts";
import { applicationNameProblem } from "./application-names.ts";
import { compareVersions, computePackageFacts } from "./versions/index.ts";

type Db = Kysely<Database> | Transaction<Database>;

const PACKAGE_FACTS: PackageFactsRule = { compute: computePackageFacts, compare: compareVersions };

/**
 * Records an analysis (see store/ingest.ts) and keeps the facts of its packages. Applications stored
 * before the naming rules (application-names.ts) keep their history, readable where a URL can name them,
 * but take no new analysis.
 */
export async function ingestAnalysis(
  db: Kysely<Database>,
  applicationName: string,
  input: AnalysisInput,
  options: IngestOptions = {},
): Promise<IngestResult> {
  const problem = applicationNameProblem(applicationName);
  if (problem) throw new IngestError(`Application name ${JSON.stringify(applicationName)} ${problem}`);
  return storeAnalysis(db, applicationName, input, options, PACKAGE_FACTS);
}

/** Records a package's published versions (from its registry) and recomputes its facts. */
export function loadPublishedVersions(
  db: Db,
  ecosystem: Ecosystem,
  name: string,
  versions: readonly PublishedVersionInput[],
): ReturnType<typeof storeVersions> {
  return storeVersions(db, ecosystem, name, versions, PACKAGE_FACTS);
}

/** Records the published versions of several packages (by id) and recomputes their facts. */
export function loadPublishedVersionsOfPackages(
  db: Db,
  items: readonly { packageId: number; versions: readonly PublishedVersionInput[] }[],
): Promise<void> {
  return storeVersionsOfPackages(db, items, PACKAGE_FACTS);
}

/** Records one advisory and recomputes the facts of the packages it names. */
export function loadAdvisory(db: Db, advisory: AdvisoryInput): Promise<number> {
  return storeAdvisory(db, advisory, PACKAGE_FACTS);
}

/** Recomputes the facts of the packages an advisory import touched. */
export function recomputeTouched(db: Db, touched: Iterable<number>): Promise<void> {
  return storeRecompute(db, touched, PACKAGE_FACTS);
}
