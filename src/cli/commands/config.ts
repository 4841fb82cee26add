import type { Command } from "commander";
import { maskUrlUserinfo } from "../../config/redact.ts";
import { defaultTextOf, SECRET_SETTINGS, settingList } from "../../config/settings.ts";
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
      // Configuration output ends up in tickets and logs: no secret, no URL credentials.
      const shown = {
        ...Object.fromEntries(
          Object.entries(runtime).map(([key, value]) => [
            key,
            typeof value === "string" ? maskUrlUserinfo(value) : value,
          ]),
        ),
        ...Object.fromEntries(SECRET_SETTINGS.filter((key) => runtime[key]).map((key) => [key, "****"])),
      } as Record<string, unknown>;
      emit(Boolean(options.json), shown, () =>
        table(
          ["SETTING", "ENV", "VALUE"],
          [
            ["baseUrl", "-", runtime.baseUrl],
            ...settingList.map((s) => [s.key, s.env, String(shown[s.key] ?? `(${defaultTextOf(s)})`)]),
          ],
        ),
      );
    });
}
