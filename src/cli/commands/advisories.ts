import { join, resolve } from "node:path";
import type { Command } from "commander";
import type { Ecosystem } from "../../domain/versions/index.ts";
import { type ImportResult, importAdvisories, summary } from "../../scanner/advisories/import.ts";
import { AdvisorySourceError } from "../../scanner/advisories/sources.ts";
import { syncAdvisories } from "../../scanner/advisories/sync.ts";
import { createRegistryFetcher } from "../../scanner/registry/cached-fetch.ts";
import { settingsFrom, withStore } from "../context.ts";
import { cliIo } from "../io.ts";
import { CliError, emit } from "../output.ts";

const collect = (value: string, previous: string[] = []) => [...previous, value];

interface CommonOptions {
  dataDir?: string;
  config?: string;
  json?: boolean;
}

const progress = (message: string) => cliIo().stderr.write(`${message}\n`);

/** What --json prints: the counts, and each malformed record with its file and field. */
function report(result: ImportResult) {
  return {
    imported: result.imported,
    updated: result.updated,
    unchanged: result.unchanged,
    skipped: result.skipped,
    withdrawn: result.withdrawn,
    malformed: result.malformed,
  };
}

async function run<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof AdvisorySourceError) throw new CliError(error.message);
    throw error;
  }
}

export function registerAdvisories(program: Command): void {
  const advisories = program
    .command("advisories")
    .description("Vulnerability advisories (OSV records: GitHub Advisory Database, OSV exports)");
  const common = (c: Command) =>
    c
      .option("--data-dir <dir>", "data directory (default: IMAGING_DATA_DIR, else ./data)")
      .option("--config <file>", "JSON config file")
      .option("--json", "print the counts as JSON");

  common(
    advisories
      .command("import")
      .description(
        "Import OSV records: JSON files, directories of them (recursive) or zip archives (OSV's all.zip). " +
          "npm and Maven records are kept; re-importing is harmless; a newer revision replaces the older.",
      )
      .argument("<path...>", "OSV record files, directories or zip archives"),
  ).action(async (paths: string[], options: CommonOptions) => {
    const result = await run(() =>
      withStore(options, (store) =>
        importAdvisories(store.db, paths, {
          progress,
          onMalformed: (m) => cliIo().stderr.write(`imaging: ${m.file}: ${m.reason} (record skipped)\n`),
        }),
      ),
    );
    emit(Boolean(options.json), report(result), () => `Advisories: ${summary(result)}`);
  });

  common(
    advisories
      .command("sync")
      .description(
        "Download OSV's per-ecosystem archives (<url>/npm/all.zip, <url>/Maven/all.zip) and import them",
      )
      .option("--url <url>", "mirror of OSV's bucket (default: OSV_MIRROR_URL)")
      .option("--ecosystem <name>", "npm or maven (repeatable; default both)", collect)
      .option("--offline", "use the archives downloaded before (no network)"),
  ).action(async (options: CommonOptions & { url?: string; ecosystem?: string[]; offline?: boolean }) => {
    const ecosystems = [...new Set(options.ecosystem ?? ["npm", "maven"])];
    const bad = ecosystems.filter((e) => e !== "npm" && e !== "maven");
    if (bad.length > 0) throw new CliError(`--ecosystem must be npm or maven, got '${bad.join("', '")}'`, 2);
    const settings = settingsFrom(options, { osvMirrorUrl: options.url });
    const fetcher = createRegistryFetcher({
      cacheDir: join(resolve(settings.dataDir), "cache", "http"),
      offline: Boolean(options.offline),
      timeoutMs: 10 * 60_000,
    });
    const result = await run(() =>
      withStore(options, (store) =>
        syncAdvisories(store.db, {
          mirrorUrl: settings.osvMirrorUrl,
          ecosystems: ecosystems as Ecosystem[],
          fetcher,
          progress,
          onMalformed: (m) => cliIo().stderr.write(`imaging: ${m.file}: ${m.reason} (record skipped)\n`),
        }),
      ),
    );
    emit(Boolean(options.json), { ...report(result), archives: result.archives }, () =>
      [
        ...result.archives.map(
          (a) => `${a.url}: ${a.bytes.toLocaleString("en")} bytes${a.fromCache ? " (cached copy)" : ""}`,
        ),
        `Advisories: ${summary(result)}`,
      ].join("\n"),
    );
  });
}
