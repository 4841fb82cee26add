import type { Command } from "commander";
import { resolveRuntimeConfig } from "../../config/runtime-config.ts";
import { settingDocs } from "../../config/settings.ts";
import { settingsFrom } from "../context.ts";
import { emit, table } from "../output.ts";

export function registerConfig(program: Command): void {
  const config = program.command("config").description("Configuration: what the service would run with");
  config
    .command("show")
    .description("Validate the configuration and print the effective values, base_url included")
    .option("--data-dir <dir>", "data directory")
    .option("--port <n>", "user access port")
    .option("--config <file>", "JSON config file (default: IMAGING_CONFIG)")
    .option("--json", "print JSON")
    .action(async (options: { dataDir?: string; port?: string; config?: string; json?: boolean }) => {
      const runtime = await resolveRuntimeConfig(settingsFrom(options, { port: options.port }));
      const shown = {
        ...runtime,
        databaseUrl: runtime.databaseUrl ? redact(runtime.databaseUrl) : undefined,
        ...Object.fromEntries(SECRET_SETTINGS.filter((key) => runtime[key]).map((key) => [key, "****"])),
      };
      emit(Boolean(options.json), shown, () =>
        table(
          ["SETTING", "ENV", "VALUE"],
          [
            ["baseUrl", "-", runtime.baseUrl],
            ...settingDocs.map((d) => [d.key, d.env, String(shown[d.key] ?? `(${d.defaultText})`)]),
          ],
        ),
      );
    });
}

/** Settings never printed: configuration output ends up in tickets and logs. */
const SECRET_SETTINGS = [
  "tokenExchangeClientSecret",
  "keycloakAdminPassword",
  "keycloakAdminClientSecret",
] as const;

function redact(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = "****";
  return parsed.toString();
}
