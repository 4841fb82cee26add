import { existsSync } from "node:fs";
import type { Command } from "commander";
import { type RuntimeConfig, sqliteFileIn } from "../../config/runtime-config.ts";
import { type Check, summarize } from "../../doctor/check.ts";
import {
  type DoctorReport,
  type DoctorSources,
  type ExchangeSecret,
  probeBaseFrom,
  runDoctor,
  UnknownCimdClientError,
} from "../../doctor/run.ts";
import { loadSecretsCipher } from "../../idp/secrets-key.ts";
import { readStoredSecret } from "../../idp/stored-secrets.ts";
import { openStore, type StoreHandle } from "../../store/database.ts";
import { type DeploymentOptions, deploymentOptions, STARTED_LOCAL_HELP, settingsFrom } from "../context.ts";
import { knownProfileNames, withCimdRepository, withKeycloakAdmin } from "../idp-context.ts";
import { cliIo } from "../io.ts";
import { CliError, emit } from "../output.ts";

interface DoctorOptions extends DeploymentOptions {
  client?: string;
  url?: string;
  json?: boolean;
}

/** The exchange client's secret where the gateway takes it from (service.ts createExchanger). */
async function exchangeSecret(options: DoctorOptions, config: RuntimeConfig): Promise<ExchangeSecret> {
  const clientId = config.tokenExchangeClientId;
  if (config.idp === "keycloak") {
    // The gateway reads it from Keycloak at start-up (provisioning), whatever is configured.
    try {
      return await withKeycloakAdmin(options, async ({ admin, realm }) => {
        const [client] = await admin.clients.find({ clientId, first: 0, max: 1 });
        if (!client?.id) return { reason: `Keycloak realm ${realm} has no client ${clientId}` };
        const { value } = await admin.clients.getClientSecret({ id: client.id });
        return value
          ? { secret: value, source: `Keycloak realm ${realm}` }
          : { reason: `Keycloak returned no secret for client ${clientId} (is it confidential?)` };
      });
    } catch (error) {
      return { reason: (error as Error).message };
    }
  }
  if (config.tokenExchangeClientSecret)
    return { secret: config.tokenExchangeClientSecret, source: "TOKEN_EXCHANGE_CLIENT_SECRET" };
  // The embedded provider keeps it sealed in the store; looking must not create a store nor a key.
  const sqliteFile = sqliteFileIn(config.dataDir);
  if (!config.databaseUrl && !existsSync(sqliteFile)) {
    return { reason: `neither TOKEN_EXCHANGE_CLIENT_SECRET is set nor is there a store at ${sqliteFile}` };
  }
  let store: StoreHandle | undefined;
  try {
    store = await openStore({ databaseUrl: config.databaseUrl, sqliteFile, migrate: false, readWorkers: 0 });
    const cipher = loadSecretsCipher(config, { generate: false });
    const secret = await readStoredSecret({ db: store.db, cipher }, clientId);
    return secret
      ? { secret, source: `the store (sealed with the key from ${cipher.source})` }
      : {
          reason: `neither TOKEN_EXCHANGE_CLIENT_SECRET nor the store's secret (the gateway's first start writes it) is set`,
        };
  } catch (error) {
    return { reason: (error as Error).message };
  } finally {
    await store?.close();
  }
}

const LABEL: Record<Check["verdict"], string> = { pass: "PASS", fail: "FAIL", warn: "WARN", "n/a": "N/A" };

function render(report: DoctorReport): string {
  const { checks } = report;
  const width = Math.max(...checks.map((c) => c.id.length));
  const idp = report.idp === "keycloak" ? "Keycloak" : "embedded identity provider";
  const lines = [
    `imaging doctor: base_url ${report.baseUrl ?? "unknown"}, ${idp}, issuer ${report.issuer ?? "unknown"}`,
    ...(report.probed && report.probed !== report.baseUrl ? [`  probing ${report.probed} (--url)`] : []),
    "",
  ];
  for (const check of checks) {
    lines.push(`${LABEL[check.verdict].padEnd(4)}  ${check.id.padEnd(width)}  ${check.title}`);
    const indent = " ".repeat(6);
    lines.push(`${indent}${check.detail}`);
    if (check.fix && check.verdict !== "pass") lines.push(`${indent}fix: ${check.fix}`);
  }
  const counts = summarize(checks);
  lines.push(
    "",
    `${checks.length} checks: ${counts.pass} passed, ${counts.fail} failed, ${counts.warn} ${counts.warn === 1 ? "warning" : "warnings"}, ${counts["n/a"]} not applicable`,
  );
  return lines.join("\n");
}

export function registerDoctor(program: Command): void {
  // The deployment is named as for `imaging start` (same flags, same settings), so both agree on it.
  deploymentOptions(
    program
      .command("doctor")
      .description(
        "Check a running gateway and its identity provider against the specification's setup rules and " +
          "Errors table: one line per check with its verdict, what was observed and the fix (exit 1 when one fails). " +
          "Give it the flags and environment the gateway was started with.",
      ),
    STARTED_LOCAL_HELP,
  )
    .option("--client <name>", "check only this CIMD client (see: imaging cimd list)")
    .option(
      "--url <base_url>",
      "probe this address instead of base_url (expected values still come from base_url)",
    )
    .option("--json", "print the checks as a JSON array of {id, title, verdict, detail, fix}")
    .action(async (options: DoctorOptions) => {
      const url = options.url === undefined ? undefined : probeBaseFrom(options.url);
      if (options.url !== undefined && url === undefined)
        throw new CliError(
          `--url must be a base_url such as http://gw.example.com:8090 (scheme, host, port; no path), got '${options.url}'`,
          2,
        );
      const settings = settingsFrom(options, { port: options.port });
      const store = sqliteFileIn(settings.dataDir);
      const sources: DoctorSources = {
        withCimd: (work) =>
          // Opening a SQLite store that is not there would create an empty one beside the gateway's.
          settings.idp === "embedded" && !settings.databaseUrl && !existsSync(store)
            ? Promise.reject(
                new Error(`there is no store at ${store}: this is not the gateway's data directory`),
              )
            : withCimdRepository(options, async (repository) =>
                work(repository, await knownProfileNames(repository)),
              ),
        exchangeSecret: (config) => exchangeSecret(options, config),
      };
      let report: DoctorReport;
      try {
        report = await runDoctor(
          { settings, platform: process.platform, url, client: options.client, local: options.local },
          sources,
        );
      } catch (error) {
        if (error instanceof UnknownCimdClientError) throw new CliError(error.message);
        throw error;
      }
      emit(Boolean(options.json), report.checks, () => render(report));
      if (report.checks.some((c) => c.verdict === "fail")) cliIo().exitCode = 1;
    });
}
