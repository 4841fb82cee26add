import { randomBytes } from "node:crypto";
import { rename, rm, writeFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import type { Command } from "commander";
import { parseApplicationName, parseDateTime } from "../../rest/params.ts";
import { buildCycloneDx } from "../../scanner/sbom/cyclonedx.ts";
import { readAnalysisExport } from "../../store/analysis-export.ts";
import { findApplication, resolveAnalysis } from "../../store/applications.ts";
import { VERSION } from "../../version.ts";
import { withStore } from "../context.ts";
import { cliIo } from "../io.ts";
import { CliError } from "../output.ts";

interface ExportOptions {
  app: string;
  date?: string;
  output?: string;
  dataDir?: string;
  config?: string;
}

export function registerExport(program: Command): void {
  const exporting = program
    .command("export")
    .description("Export an application's analysis in a standard format");
  exporting
    .command("cyclonedx")
    .description(
      "Write a CycloneDX 1.6 SBOM (JSON) of an application's analysis: components with package URLs, the " +
        "vulnerabilities affecting them, and the application code referring to each package as evidence",
    )
    .requiredOption("--app <name>", "the application")
    .option("--date <date-time>", "the analysis in force at this ISO 8601 instant (default: the latest)")
    .option("--output <file>", "write the SBOM to this file (default: standard output)")
    .option("--data-dir <dir>", "data directory (default: IMAGING_DATA_DIR, else ./data)")
    .option("--config <file>", "JSON config file")
    .action(async (options: ExportOptions) => {
      const name = parseApplicationName(options.app);
      if (!name.ok) throw new CliError(`--app: ${name.detail}`, 2);
      const date = parseDateTime(options.date);
      if (!date.ok) {
        throw new CliError(
          `--date must be an ISO 8601 date-time such as 2024-03-01T00:00:00Z, got '${options.date}'`,
          2,
        );
      }
      const bom = await withStore(options, async (store) => {
        const application = await findApplication(store.db, name.value);
        if (!application) throw new CliError(`no application named '${name.value}'`);
        const analysis = await resolveAnalysis(store.db, application.id, date.value);
        if (!analysis) {
          throw new CliError(
            date.value
              ? `application '${application.name}' has no analysis at or before ${date.value}`
              : `application '${application.name}' has not been analyzed yet`,
          );
        }
        const data = await readAnalysisExport(store.db, application.id, analysis.seq);
        return buildCycloneDx(data, {
          application: { name: application.name, description: application.description },
          analyzedAt: new Date(analysis.analyzedAt).toISOString().replace(".000Z", "Z"),
          tool: { name: "imaging-services", version: VERSION },
        });
      });
      const text = `${JSON.stringify(bom, null, 2)}\n`;
      if (!options.output) {
        cliIo().stdout.write(text);
        return;
      }
      await writeWhole(resolve(options.output), text);
      const counts = bom as { components: unknown[]; vulnerabilities: unknown[] };
      cliIo().stderr.write(
        `CycloneDX 1.6 SBOM of ${name.value} written to ${options.output}: ` +
          `${counts.components.length} components, ${counts.vulnerabilities.length} vulnerabilities\n`,
      );
    });
}

/** Writes beside the target then renames: a reader never sees half a file, a failure leaves none. */
async function writeWhole(file: string, text: string): Promise<void> {
  const temporary = `${file}.${randomBytes(4).toString("hex")}.tmp`;
  try {
    await writeFile(temporary, text, { flag: "wx" });
    await rename(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true });
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === "ENOENT"
        ? `the directory ${dirname(file)} does not exist`
        : code === "EACCES" || code === "EPERM"
          ? "permission denied"
          : code === "EISDIR"
            ? "it is a directory"
            : (error as Error).message;
    throw new CliError(`cannot write ${file}: ${why}`);
  }
}
