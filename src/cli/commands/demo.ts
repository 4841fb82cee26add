import type { Command } from "commander";
import { loadDemo } from "../../scanner/demo/load-demo.ts";
import { withStore } from "../context.ts";
import { emit } from "../output.ts";

export function registerDemo(program: Command): void {
  const demo = program
    .command("demo")
    .description("Demo analyses (real public package facts, fictional applications)");
  demo
    .command("load")
    .description("Load the demo applications into the store (existing ones are left as they are)")
    .option("--data-dir <dir>", "data directory (default: IMAGING_DATA_DIR, else ./data)")
    .option("--config <file>", "JSON config file")
    .option("--json", "print the result as JSON")
    .action(async (options: { dataDir?: string; config?: string; json?: boolean }) => {
      const result = await withStore(options, (store) => loadDemo(store.db));
      emit(Boolean(options.json), result, () =>
        [
          `Demo data: ${result.packages} packages, ${result.advisories} advisories`,
          ...result.applications.map(
            (a) =>
              `  ${a.name}: ${a.skipped ? "already present, left as is" : `${a.analyses} analyses loaded`}`,
          ),
        ].join("\n"),
      );
    });
}
