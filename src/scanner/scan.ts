/**
 * `imaging scan`: walk the scanned path once, give each input reader the files it claims, merge and
 * dedupe what they find into one analysis, then record it (local store) or hand it to the caller
 * (document file, upload to a platform).
 *
 *   walk ─► readers (INPUT_READERS) ─► merge/dedupe ─► code extractors ─► AnalysisDocument ─► gather facts
 *        ─► ingest ─► summary
 */

import { statSync } from "node:fs";
import { basename, dirname, resolve } from "node:path";
import type { Kysely } from "kysely";
import { packageNameProblem, versionProblem } from "../domain/package-names.ts";
import { recordAnalysis } from "../domain/record-analysis.ts";
import type { ChangeCount } from "../store/ingest.ts";
import type { ExternalObjectInput, ReferenceInput } from "../store/input-records.ts";
import type { Database } from "../store/schema.ts";
import { VERSION } from "../version.ts";
import { type AnalysisDocument, analysisDocumentOf } from "./analysis-document.ts";
import { extractJavaCode, type JavaCodeSummary } from "./code/java/extract.ts";
import { extractJavaScript } from "./code/js/index.ts";
import { type FactsOptions, gatherPackageFacts } from "./facts/index.ts";
import {
  type InputReader,
  type InventoryPackage,
  type InventoryWarning,
  type ReaderContext,
  ScanInputError,
} from "./inventory.ts";
import { mavenReader } from "./maven/reader.ts";
import { chooseLockfiles, lockfileOption } from "./npm/lockfile-choice.ts";
import { npmReader } from "./npm/reader.ts";
import { type SkippedProject, selectApplication } from "./projects.ts";
import { sbomReader } from "./sbom/reader.ts";
import { widerScope } from "./scope.ts";
import { walkFiles } from "./walk.ts";

/** Every input reader of `imaging scan`, in one place. */
export const INPUT_READERS: readonly InputReader[] = [npmReader, mavenReader, sbomReader];

type ScanContext = Omit<ReaderContext, "root">;

interface ScanOptions extends ScanContext {
  readers: readonly InputReader[];
  /** `--lockfile`: the npm, pnpm or yarn lockfile to read in its folder (npm/lockfile-choice.ts). */
  lockfile?: string | undefined;
  /**
   * Read every project of the scanned tree (templates, examples, fixtures...), not only the application
   * (`--all-projects`; see projects.ts).
   */
  allProjects?: boolean;
}

/** A package of the scan: found in one or more inputs. */
export interface ScannedPackage extends InventoryPackage {
  /** Every input it was read from, relative to the scanned path, sorted. */
  sources: string[];
}

export interface ScanResult {
  /** Inputs read, relative to the scanned path, with the reader that read each. */
  inputs: { reader: string; file: string }[];
  /**
   * Deduplicated by ecosystem, name and version: dev only when dev everywhere, direct when direct anywhere,
   * the widest scope (scope.ts).
   */
  packages: ScannedPackage[];
  warnings: InventoryWarning[];
  /** Projects found below the application and not read (see projects.ts), with the reason. */
  skippedProjects: SkippedProject[];
  /** External objects the application's code refers to, and the references to them (code extractors). */
  objects: ExternalObjectInput[];
  references: ReferenceInput[];
  /** Per language: the code read and at which precision. */
  code: CodeSummary[];
}

/** What the scan summary says about the JavaScript/TypeScript code read. */
interface JavaScriptCodeSummary {
  language: "javascript";
  /** Every use is resolved to the package member it names (`lodash.merge`), from the sources. */
  precision: "source, member level";
  files: number;
  /** Files that did not parse (each named in a warning). */
  unreadable: number;
}

type CodeSummary = JavaScriptCodeSummary | JavaCodeSummary;

/** Reads every supported input under `path` (a directory, or one lockfile, SBOM or archive). */
export async function scanPath(path: string, options: ScanOptions): Promise<ScanResult> {
  const absolute = resolve(path);
  let isDirectory: boolean;
  try {
    isDirectory = statSync(absolute).isDirectory();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ScanInputError(
      path,
      code === "ENOENT" ? "no such file or directory" : `cannot be read (${code})`,
    );
  }
  const root = isDirectory ? absolute : dirname(absolute);
  if (options.lockfile !== undefined && !isDirectory) {
    throw new ScanInputError(
      options.lockfile,
      "--lockfile chooses among the lockfiles of a scanned directory",
    );
  }
  options.progress(`looking for inputs in ${path}`);
  const walked = isDirectory ? walkFiles(absolute, path, { includeSamples: true }) : [basename(absolute)];
  // A file named by itself is the whole input; a directory is one application unless asked otherwise.
  const selection = isDirectory
    ? selectApplication(absolute, walked, { allProjects: options.allProjects ?? false })
    : { files: walked, skipped: [], warnings: [] };
  for (const s of selection.skipped) options.progress(`skipped ${s.path}: ${s.reason}`);
  // One lockfile per project, the one its package manager reads: the others are not inputs at all.
  const chosen =
    options.lockfile === undefined || !isDirectory ? undefined : lockfileOption(options.lockfile, absolute);
  if (chosen !== undefined && !selection.files.includes(chosen)) {
    throw new ScanInputError(
      options.lockfile as string,
      "--lockfile names a lockfile of a project that is not read (--all-projects reads every project)",
    );
  }
  const lockfiles = isDirectory
    ? chooseLockfiles(absolute, selection.files, chosen)
    : { files: selection.files, warnings: [] };
  const files = lockfiles.files;
  const claimed = new Map<InputReader, string[]>();
  const inputs: ScanResult["inputs"] = [];
  for (const file of files) {
    const reader = options.readers.find((r) => r.claims(file));
    if (!reader) continue;
    claimed.set(reader, [...(claimed.get(reader) ?? []), resolve(root, file)]);
    inputs.push({ reader: reader.name, file });
  }
  const skippedNote =
    selection.skipped.length === 0
      ? ""
      : `; ${selection.skipped.length} other project${selection.skipped.length === 1 ? "" : "s"} below it skipped (--all-projects reads them)`;
  if (inputs.length === 0 && files.includes("package.json")) {
    throw new ScanInputError(
      isDirectory ? `${path.replace(/\/+$/, "")}/package.json` : path,
      `no lockfile beside it to give exact versions (run npm install --package-lock-only, or your package manager's equivalent)${skippedNote}`,
    );
  }
  if (inputs.length === 0) {
    throw new ScanInputError(
      path,
      isDirectory
        ? `no supported input found (npm/yarn/pnpm lockfiles, pom.xml, gradle.lockfile, jar/war/ear, SBOMs named *.cdx.json, *.spdx.json or bom.json)${skippedNote}`
        : "not a supported input (a lockfile, pom.xml, gradle.lockfile, jar/war/ear, or an SBOM named *.cdx.json, *.spdx.json or bom.json)",
    );
  }
  options.progress(
    `found ${inputs.length} input${inputs.length === 1 ? "" : "s"}: ` +
      [...claimed].map(([reader, list]) => `${reader.name} ${list.length}`).join(", "),
  );
  const { readers: _, allProjects: __, lockfile: ___, ...context } = options;
  const found: InventoryPackage[] = [];
  const warnings: InventoryWarning[] = [...selection.warnings, ...lockfiles.warnings];
  for (const [reader, list] of claimed) {
    const inventory = await reader.read(list, { ...context, root, singleFile: !isDirectory });
    // One at a time: spreading a 150,000-package inventory into push() overflows the call stack.
    for (const p of inventory.packages) found.push(p);
    for (const w of inventory.warnings) warnings.push(w);
  }
  const packages = withValidNames(dedupe(found), warnings);
  options.progress(`${packages.length} packages (${packages.filter((p) => p.dev).length} dev only)`);
  // The JavaScript extractor reads source code only in a scanned directory (a lone lockfile has none
  // beside it); the Java extractor also reads a scanned archive's own classes.
  const js = isDirectory
    ? await extractJavaScript(root, files, packages, { progress: options.progress })
    : { objects: [], references: [], warnings: [] };
  const java = await extractJavaCode({ ...context, root, files, packages, singleFile: !isDirectory });
  return {
    inputs,
    packages,
    skippedProjects: selection.skipped,
    warnings: [...warnings, ...js.warnings, ...java.warnings],
    objects: [...js.objects, ...java.objects],
    references: [...js.references, ...java.references],
    code: [
      ...("stats" in js && js.stats.files + js.stats.failed > 0
        ? [
            {
              language: "javascript",
              precision: "source, member level",
              files: js.stats.files,
              unreadable: js.stats.failed,
            } satisfies JavaScriptCodeSummary,
          ]
        : []),
      ...(java.summary ? [java.summary] : []),
    ],
  };
}

function dedupe(found: readonly InventoryPackage[]): ScannedPackage[] {
  const byKey = new Map<string, ScannedPackage>();
  for (const p of found) {
    const key = `${p.ecosystem}:${p.name}@${p.version}`;
    const seen = byKey.get(key);
    if (!seen) byKey.set(key, { ...p, sources: [p.source] });
    else {
      seen.dev &&= p.dev;
      seen.direct ||= p.direct;
      seen.scope = widerScope(seen.scope, p.scope);
      if (!seen.sources.includes(p.source)) seen.sources.push(p.source);
    }
  }
  for (const p of byKey.values()) p.sources.sort();
  return [...byKey.values()].sort(
    (a, b) =>
      a.ecosystem.localeCompare(b.ecosystem) ||
      a.name.localeCompare(b.name) ||
      a.version.localeCompare(b.version),
  );
}

/**
 * Packages whose name or version the ecosystem's rules refuse (package-names.ts) are left out, each with a
 * warning naming the input it came from: they would never be found on a registry, and `../` or `?` in a
 * name would choose another path there.
 */
function withValidNames(packages: ScannedPackage[], warnings: InventoryWarning[]): ScannedPackage[] {
  return packages.filter((p) => {
    const nameProblem = packageNameProblem(p.ecosystem, p.name);
    const problem = nameProblem
      ? `package name ${JSON.stringify(p.name)} ${nameProblem}`
      : versionProblem(p.ecosystem, p.version) &&
        `${JSON.stringify(p.name)}: version ${JSON.stringify(p.version)} ${versionProblem(p.ecosystem, p.version)}`;
    if (!problem) return true;
    for (const file of p.sources) warnings.push({ file, message: `${problem}: skipped` });
    return false;
  });
}

export function analysisDocument(
  application: string,
  analyzedAt: string,
  scan: ScanResult,
): AnalysisDocument {
  const packages = scan.packages.map(({ ecosystem, name, version, scope, sources }) => ({
    ecosystem,
    name,
    version,
    ...(scope === null ? {} : { scope }),
    sources,
  }));
  return analysisDocumentOf(
    application,
    { analyzedAt, packages, objects: scan.objects, references: scan.references },
    { scanner: { name: "imaging-services", version: VERSION }, warnings: scan.warnings },
  );
}

/** What `imaging scan --json` prints (and the platform's upload answers with). */
export interface ScanSummary {
  application: string;
  analyzedAt: string;
  packages: number;
  devPackages: number;
  externalObjects: number;
  references: number;
  /** Packages whose version a known vulnerability affects; null when the analysis was not recorded here. */
  vulnerablePackages: number | null;
  warnings: InventoryWarning[];
  inputs: string[];
  /** Projects below the application that were not read, each with why (`--all-projects` reads them). */
  skippedProjects: SkippedProject[];
  /**
   * The code read per language and the precision of its objects: "bytecode" (members, from class files)
   * or "source, class level" (classes only, from sources when nothing was compiled).
   */
  code: CodeSummary[];
  /** Position of the analysis in the application's history, when recorded. */
  seq?: number;
  /** What this analysis changed compared with the previous one, when recorded. */
  changes?: { packages: ChangeCount; externalObjects: ChangeCount; references: ChangeCount };
  /** Packages whose versions and release dates could not be gathered (offline, not on the registry). */
  factsMissing?: { ecosystem: string; name: string; reason: string }[];
}

export function unrecordedSummary(document: AnalysisDocument, scan: ScanResult): ScanSummary {
  return {
    application: document.application,
    analyzedAt: document.analyzedAt,
    packages: document.packages.length,
    devPackages: scan.packages.filter((p) => p.dev).length,
    externalObjects: document.objects.length,
    references: document.references.length,
    vulnerablePackages: null,
    warnings: scan.warnings,
    inputs: scan.inputs.map((i) => i.file),
    skippedProjects: scan.skippedProjects,
    code: scan.code,
  };
}

interface RecordOptions {
  /** How the published versions and release dates of the scanned packages are read (the registries). */
  factsOptions: FactsOptions;
}

/**
 * Records the analysis in the store (domain/record-analysis.ts: all or nothing, never before the
 * application's latest one), its packages' facts read from the registries first.
 */
export async function recordScan(
  db: Kysely<Database>,
  document: AnalysisDocument,
  scan: ScanResult,
  options: RecordOptions,
): Promise<ScanSummary> {
  const gather = async (packages: AnalysisDocument["packages"]) =>
    (await gatherPackageFacts(db, packages, options.factsOptions)).missing;
  const result = await recordAnalysis(
    db,
    document.application,
    document,
    { gather },
    options.factsOptions.progress,
  );
  return {
    ...unrecordedSummary(document, scan),
    analyzedAt: result.analyzedAt,
    vulnerablePackages: result.counts.vulnerablePackages,
    seq: result.seq,
    changes: { packages: result.packages, externalObjects: result.objects, references: result.references },
    factsMissing: [...result.factsMissing],
  };
}
