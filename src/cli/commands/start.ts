import type { Command } from "commander";
import { MCP_SERVER_NAMES } from "../../contracts/platform.ts";
import { demoLoadPending, loadDemo } from "../../scanner/demo/load-demo.ts";
import { PARTS, type Part, startService } from "../../service.ts";
import { asStoreUnavailable } from "../../store/store-errors.ts";
import { type DeploymentOptions, deploymentConfig, deploymentOptions } from "../context.ts";
import { CliError, emit } from "../output.ts";

interface StartOptions extends DeploymentOptions {
  demo?: boolean;
  only?: string[];
  json?: boolean;
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

export function registerStart(program: Command): void {
  deploymentOptions(
    program
      .command("start")
      .description("Run the service: gateway on the user access port, REST API on its internal port"),
  )
    .option("--demo", "load the demo analyses when the store is empty")
    .option("--only <part>", `run one part only: ${PARTS.join(", ")} (repeatable)`, collect)
    .option("--json", "print the start-up summary as JSON")
    .action(async (options: StartOptions) => {
      const only = (options.only ?? []) as Part[];
      const unknown = only.filter((p) => !PARTS.includes(p));
      if (unknown.length > 0)
        throw new CliError(`--only takes ${PARTS.join(", ")}; got ${unknown.join(", ")}`, 2);
      const config = await deploymentConfig(options);
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
      // Before the summary: whoever reads it may stop the service at once (a test, a supervisor).
      let stopping = false;
      const shutdown = (signal: string) => {
        if (stopping) {
          process.stderr.write(`${signal} received again: exiting now\n`);
          process.exit(1);
        }
        stopping = true;
        const seconds = config.shutdownTimeout;
        // SIGTERM (a service manager, a rolling restart) drains first: the load balancer takes the replica
        // out while it still serves. SIGINT (Ctrl-C at a terminal) stops at once.
        const drainSeconds = signal === "SIGTERM" ? config.shutdownDrain : 0;
        process.stderr.write(
          drainSeconds > 0
            ? `${signal} received: draining for ${drainSeconds} s (SHUTDOWN_DRAIN: /readyz answers 503, requests are still served), then finishing in-flight requests (at most ${seconds} s, SHUTDOWN_TIMEOUT; a second signal exits at once)\n`
            : `${signal} received: finishing in-flight requests (at most ${seconds} s, SHUTDOWN_TIMEOUT; a second signal exits at once)\n`,
        );
        // The stop cuts what is left before the timeout; this is the backstop if something still hangs.
        setTimeout(
          () => {
            process.stderr.write(
              `the stop took longer than ${drainSeconds + seconds} s (SHUTDOWN_DRAIN + SHUTDOWN_TIMEOUT): exiting now\n`,
            );
            process.exit(1);
          },
          (drainSeconds + seconds) * 1000,
        ).unref();
        const t0 = performance.now();
        service
          .drain(drainSeconds * 1000)
          .then(() => service.stop(seconds * 1000))
          .then(
            () => {
              const steps = service.stopDurations.map((d) => `${d.name} ${d.ms} ms`).join(", ");
              const drained = drainSeconds > 0 ? `drained ${drainSeconds} s, ` : "";
              process.stderr.write(
                `stopped in ${Math.round(performance.now() - t0)} ms (${drained}${steps})\n`,
              );
              process.exit(0);
            },
            (error: unknown) => {
              process.stderr.write(`shutdown failed: ${(error as Error).message}\n`);
              process.exit(1);
            },
          );
      };
      // A store fault that some code path forgot to catch must not end the replica: it is logged as the bug
      // it is (the fault tests look for this line) and the process goes on. Anything else ends it, as before.
      process.on("unhandledRejection", (reason) => {
        const fault = asStoreUnavailable(reason);
        if (!fault) throw reason;
        process.stderr.write(`[bug] a store fault went unhandled, the process goes on: ${fault.message}\n`);
      });
      process.on("SIGINT", () => shutdown("SIGINT"));
      process.on("SIGTERM", () => shutdown("SIGTERM"));
      emit(
        Boolean(options.json),
        {
          baseUrl: config.baseUrl,
          gateway: service.gatewayUrl,
          ...(service.gatewayUrl ? { console: `${config.baseUrl}/` } : {}),
          rest: service.restUrl,
          mcp: service.mcpUrls,
          store: service.store.location,
          readiness: service.gatewayUrl ? `${service.gatewayUrl}/readyz` : null,
          metrics: service.metricsUrl ?? null,
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
            ...(service.gatewayUrl
              ? [`  console   ${config.baseUrl}/ (web console: open it in a browser and sign in)`]
              : []),
            `  gateway   ${service.gatewayUrl} (healthcheck: ${config.baseUrl}/mcp/healthcheck)`,
            ...(service.gatewayUrl
              ? [
                  `  health    ${service.gatewayUrl}/readyz (readiness, for the load balancer), ${service.gatewayUrl}/livez (liveness)`,
                ]
              : []),
            `  metrics   ${service.metricsUrl ?? "off (METRICS_PORT sets its internal port)"}`,
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
            `  Claude Code  claude mcp add --transport http --scope user ${MCP_SERVER_NAMES.analysis} ${config.baseUrl}/mcp`,
            `  VS Code      .vscode/mcp.json: {"servers": {"${MCP_SERVER_NAMES.analysis}": {"type": "http", "url": "${config.baseUrl}/mcp"}}}`,
          ].join("\n"),
      );
    });
}
