import type { Command } from "commander";
import { HTTP_PORT } from "../../config/base-url.ts";
import { resolveRuntimeConfig } from "../../config/runtime-config.ts";
import { demoLoadPending, loadDemo } from "../../scanner/demo/load-demo.ts";
import { PARTS, type Part, startService } from "../../service.ts";
import { settingsFrom } from "../context.ts";
import { CliError, emit } from "../output.ts";

interface StartOptions {
  local?: boolean;
  dataDir?: string;
  port?: string;
  demo?: boolean;
  only?: string[];
  config?: string;
  json?: boolean;
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

export function registerStart(program: Command): void {
  program
    .command("start")
    .description("Run the service: gateway on the user access port, REST API on its internal port")
    .option("--data-dir <dir>", "data directory (default: IMAGING_DATA_DIR, else ./data)")
    .option("--port <n>", "user access port (default 8090 for http, 443 for https)")
    .option("--demo", "load the demo analyses when the store is empty")
    .option(
      "--local",
      "development on this machine: listen on loopback, base_url http://localhost:<port> unless PUBLIC_URL is set",
    )
    .option("--only <part>", `run one part only: ${PARTS.join(", ")} (repeatable)`, collect)
    .option("--config <file>", "JSON config file (default: IMAGING_CONFIG)")
    .option("--json", "print the start-up summary as JSON")
    .action(async (options: StartOptions) => {
      const only = (options.only ?? []) as Part[];
      const unknown = only.filter((p) => !PARTS.includes(p));
      if (unknown.length > 0)
        throw new CliError(`--only takes ${PARTS.join(", ")}; got ${unknown.join(", ")}`, 2);
      // AI clients accept plain http only towards loopback: --local makes the quick start sign-in work.
      const local = options.local && !process.env.PUBLIC_URL;
      const port = options.port ?? (local ? String(HTTP_PORT) : undefined);
      const settings = settingsFrom(options, {
        port,
        ...(local ? { publicUrl: `http://localhost:${port}`, bindAddress: "127.0.0.1" } : {}),
      });
      const config = await resolveRuntimeConfig(settings);
      let demo: string[] = [];
      const service = await startService(config, {
        only,
        idp: { adminPassword: process.env.IMAGING_ADMIN_PASSWORD },
        beforeListen: async (store) => {
          if (options.demo && (await demoLoadPending(store.db))) {
            demo = (await loadDemo(store.db)).applications.filter((a) => !a.skipped).map((a) => a.name);
          }
        },
      });
      emit(
        Boolean(options.json),
        {
          baseUrl: config.baseUrl,
          gateway: service.gatewayUrl,
          rest: service.restUrl,
          mcp: service.mcpUrls,
          store: service.store.location,
          demo,
          ...(service.admin?.created
            ? { adminCreated: { user: "admin", password: service.admin.generatedPassword } }
            : {}),
          ...(service.keycloak
            ? { keycloak: { realm: config.realm, issuer: config.issuer, ...service.keycloak } }
            : {}),
        },
        () =>
          [
            `imaging-services ${config.baseUrl} is up`,
            `  gateway   ${service.gatewayUrl} (healthcheck: ${config.baseUrl}/mcp/healthcheck)`,
            `  REST API  ${service.restUrl} (internal), ${config.baseUrl}/rest/openapi.json`,
            `  MCP       ${config.baseUrl}/mcp (analysis, internal ${service.mcpUrls.analysis}), ${config.baseUrl}/mcp/gatekeeper (internal ${service.mcpUrls.gatekeeper})`,
            `  store     ${service.store.location}`,
            ...(demo.length > 0 ? [`  demo data loaded: ${demo.join(", ")}`] : []),
            ...(service.keycloak
              ? [
                  `  identity  Keycloak realm ${config.realm} (${config.keycloakUrl}), issuer ${config.issuer}`,
                  `            provisioning: ${service.keycloak.changes.length === 0 ? "everything already in place" : `${service.keycloak.changes.length} change(s)`}`,
                  ...service.keycloak.warnings.map((w) => `  WARNING   ${w}`),
                ]
              : []),
            ...(service.admin?.created
              ? service.admin.generatedPassword
                ? [
                    `  sign-in   user 'admin' created with the password ${service.admin.generatedPassword}`,
                    "            (shown once: copy it now, or change it with: imaging users passwd admin)",
                  ]
                : ["  sign-in   user 'admin' created with the password of IMAGING_ADMIN_PASSWORD"]
              : []),
            "",
            "Connect an AI client (its CIMD policy first, e.g. imaging cimd add claude-code --preset claude-code):",
            `  Claude Code  claude mcp add --transport http --scope user imaging ${config.baseUrl}/mcp`,
            `  VS Code      .vscode/mcp.json: {"servers": {"imaging": {"type": "http", "url": "${config.baseUrl}/mcp"}}}`,
          ].join("\n"),
      );
      const shutdown = (signal: string) => {
        process.stderr.write(`${signal} received: finishing in-flight requests\n`);
        service.stop().then(
          () => process.exit(0),
          (error: unknown) => {
            process.stderr.write(`shutdown failed: ${(error as Error).message}\n`);
            process.exit(1);
          },
        );
      };
      process.once("SIGINT", () => shutdown("SIGINT"));
      process.once("SIGTERM", () => shutdown("SIGTERM"));
    });
}
