import type { Command } from "commander";
import { settingDocs } from "../../config/settings.ts";
import {
  type DeploymentOptions,
  deploymentConfig,
  deploymentOptions,
  STARTED_LOCAL_HELP,
} from "../context.ts";
import { emit, table } from "../output.ts";

export function registerConfig(program: Command): void {
  const config = program.command("config").description("Configuration: what the service would run with");
  deploymentOptions(
    config
      .command("show")
      .description("Validate the configuration and print the effective values, base_url included"),
    STARTED_LOCAL_HELP,
  )
    .option("--json", "print JSON")
    .action(async (options: DeploymentOptions & { json?: boolean }) => {
      const runtime = await deploymentConfig(options);
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
