import { writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import type { Command } from "commander";
import { applicationNameProblem } from "../../domain/application-names.ts";
import { createRegistryFetcher, redactUrl } from "../../scanner/registry/cached-fetch.ts";
import {
  analysisDocument,
  INPUT_READERS,
  recordScan,
  type ScanSummary,
  scanPath,
  unrecordedSummary,
} from "../../scanner/scan.ts";
import { UploadError, uploadAnalysis } from "../../scanner/upload.ts";
import { isUnusedDefaultStore, refuseUnusedDefaultStore, settingsFrom, withStore } from "../context.ts";
import { cliIo } from "../io.ts";
import { CliError, emit } from "../output.ts";

interface ScanCliOptions {
  app: string;
  date?: string;
  dataDir?: string;
  config?: string;
  offline?: boolean;
  json?: boolean;
  output?: string;
  server?: string;
  progress?: boolean;
  lockfile?: string;
  allowEmpty?: boolean;
  allProjects?: boolean;
}

/** As the REST API reads `date`: an ISO 8601 date-time, UTC when it has no offset. */
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})?$/;

export function registerScan(program: Command): void {
  program
    .command("scan")
    .description("Record one analysis of an application: its npm/Maven dependencies or an SBOM")
    .argument("<path>", "project directory, lockfile, SBOM (*.cdx.json, *.spdx.json) or jar/war/ear")
    .requiredOption("--app <name>", "application the analysis belongs to (created when missing)")
    .option("--date <iso8601>", "date of the analysis (default: now)")
    .option("--data-dir <dir>", "data directory (default: IMAGING_DATA_DIR, else ./data)")
    .option("--config <file>", "JSON config file")
    .option("--offline", "use the on-disk registry cache only")
    .option("--json", "print the summary as JSON")
    .option("--output <file>", "write the analysis document to FILE instead of recording it here")
    .option("--server <url>", "send the analysis to this platform (admin API key in IMAGING_API_KEY)")
    .option("--progress", "print progress on stderr even when it is not a terminal")
    .option(
      "--lockfile <path>",
      "the npm/pnpm/yarn lockfile to read where a folder has several (default: the package manager's)",
    )
    .option("--allow-empty", "record (or write, or send) the analysis even when no package was found")
    .option(
      "--all-projects",
      "also read the projects found below the application (templates, examples, fixtures with their own lockfile or build)",
    )
    .action(async (path: string, options: ScanCliOptions) => {
      const summary = await scan(path, options);
      emit(Boolean(options.json), summary, () => describe(summary, options));
    });
}

async function scan(path: string, options: ScanCliOptions): Promise<ScanSummary> {
  const application = options.app.trim();
  const nameProblem = applicationNameProblem(application);
  if (nameProblem) {
    // JSON quoting: a control character in the name is shown escaped, never sent to the terminal
    throw new CliError(
      `--app ${JSON.stringify(options.app)} ${nameProblem}: an application name is one URL path segment`,
    );
  }
  const withOffset = (text: string) => (/(Z|[+-]\d{2}:\d{2})$/.test(text) ? text : `${text}Z`);
  if (
    options.date !== undefined &&
    (!ISO_DATE_TIME.test(options.date) || Number.isNaN(Date.parse(withOffset(options.date))))
  ) {
    throw new CliError(`--date "${options.date}" is not an ISO 8601 date-time such as 2024-06-01T00:00:00Z`);
  }
  const analyzedAt = new Date(
    options.date === undefined ? Date.now() : withOffset(options.date),
  ).toISOString();
  const apiKey = cliIo().env.IMAGING_API_KEY;
  if (options.server !== undefined) {
    if (!/^https?:\/\/[^\s/]+/.test(options.server) || !URL.canParse(options.server)) {
      throw new CliError(`--server "${options.server}" is not an http(s) URL`);
    }
    if (!apiKey) throw new CliError("--server needs an admin API key in IMAGING_API_KEY");
  }
  const settings = settingsFrom(options);
  // Before scanning: a scan that would be recorded in a store nobody uses stops here, saying so.
  if (options.server === undefined && options.output === undefined)
    refuseUnusedDefaultStore(options, settings);
  // From a project folder (CI), the registry cache is the user's, not a ./data left in the project.
  const cacheDir = isUnusedDefaultStore(options, settings)
    ? join(cliIo().env.XDG_CACHE_HOME || join(homedir(), ".cache"), "imaging-services", "http")
    : join(settings.dataDir, "cache", "http");
  const offline = Boolean(options.offline);
  const fetcher = createRegistryFetcher({ cacheDir, offline });
  // Progress is for people at a terminal; scripts and CI logs get the summary and one-line errors.
  const showProgress = Boolean(options.progress) || cliIo().stderr.isTTY;
  const progress = (message: string) => {
    if (showProgress) cliIo().stderr.write(`scan: ${message}\n`);
  };
  const context = {
    fetcher,
    offline,
    npmRegistryUrl: settings.npmRegistryUrl,
    mavenRepositoryUrl: settings.mavenRepositoryUrl,
    mavenLocalRepository: settings.mavenLocalRepository ?? join(homedir(), ".m2", "repository"),
    mavenSearchUrl: settings.mavenSearchUrl,
    progress,
  };
  const result = await scanPath(path, {
    ...context,
    readers: INPUT_READERS,
    allProjects: Boolean(options.allProjects),
    lockfile: options.lockfile,
  });
  // an empty analysis would replace the application's inventory with nothing: only when asked for
  if (result.packages.length === 0 && !options.allowEmpty) {
    const why = result.warnings[0];
    throw new CliError(
      `${path}: no package found, nothing recorded${why ? ` (${why.file}: ${why.message})` : ""}; --allow-empty records an empty analysis`,
    );
  }
  const document = analysisDocument(application, analyzedAt, result);
  if (options.output !== undefined) {
    try {
      writeFileSync(options.output, `${JSON.stringify(document, null, 2)}\n`);
    } catch (error) {
      throw new CliError(`${options.output}: cannot be written (${(error as NodeJS.ErrnoException).code})`);
    }
    progress(`analysis document written to ${options.output}`);
  }
  if (options.server !== undefined) {
    progress(`sending the analysis to ${redactUrl(options.server)}`);
    try {
      const answer = await uploadAnalysis(options.server, apiKey as string, document);
      // The platform's counts of what it recorded; the warnings are this scan's own, listed here.
      return {
        ...unrecordedSummary(document, result),
        analyzedAt: answer.analyzedAt,
        seq: answer.seq,
        packages: answer.packages,
        externalObjects: answer.externalObjects,
        references: answer.references,
        vulnerablePackages: answer.vulnerablePackages,
        changes: answer.changes,
        ...(answer.facts ? { factsMissing: answer.facts.missing } : {}),
      };
    } catch (error) {
      if (error instanceof UploadError) throw new CliError(error.message);
      throw error;
    }
  }
  if (options.output !== undefined) return unrecordedSummary(document, result);
  return withStore(options, (store) =>
    recordScan(store.db, document, result, {
      factsOptions: { ...context },
    }),
  );
}

function describe(summary: ScanSummary, options: ScanCliOptions): string {
  const where = options.server
    ? `sent to ${redactUrl(options.server)}, recorded there as analysis ${summary.seq}`
    : summary.seq !== undefined
      ? `recorded as analysis ${summary.seq}`
      : `written to ${options.output}, not recorded`;
  const lines = [
    `${summary.application} at ${summary.analyzedAt}: ${where}`,
    `  inputs: ${summary.inputs.join(", ")}`,
    `  packages: ${summary.packages} (${summary.devPackages} dev only)`,
    `  vulnerable packages: ${summary.vulnerablePackages ?? "unknown (not recorded here)"}`,
    `  external objects: ${summary.externalObjects}, references: ${summary.references}`,
  ];
  for (const c of summary.code ?? []) {
    lines.push(
      `  ${c.language} code: ${c.files} ${c.precision === "bytecode" ? "class" : "source"} files read, precision: ${c.precision}`,
    );
  }
  if (summary.changes) {
    const { packages } = summary.changes;
    lines.push(
      `  changes since the previous analysis: ${packages.added} packages added, ${packages.removed} removed`,
    );
  }
  if (summary.factsMissing && summary.factsMissing.length > 0) {
    lines.push(`  no registry facts for ${summary.factsMissing.length} packages (see --json)`);
  }
  for (const w of summary.warnings)
    lines.push(`  warning: ${w.file}${w.line ? `:${w.line}` : ""}: ${w.message}`);
  for (const s of summary.skippedProjects ?? []) lines.push(`  skipped project: ${s.path}: ${s.reason}`);
  if ((summary.skippedProjects ?? []).length > 0) {
    lines.push("  (--all-projects reads the skipped projects too)");
  }
  return lines.join("\n");
}
