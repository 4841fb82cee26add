import { existsSync } from "node:fs";
import type { Command } from "commander";
import { loadSettings } from "../config/load-config.ts";
import { type RuntimeConfig, resolveRuntimeConfig, sqliteFileIn } from "../config/runtime-config.ts";
import type { Settings } from "../config/settings.ts";
import { openStore, type StoreHandle } from "../store/database.ts";
import { cliIo } from "./io.ts";
import { CliError } from "./output.ts";

export interface StoreOptions {
  dataDir?: string;
  config?: string;
}

export function settingsFrom(
  options: StoreOptions,
  extra: Partial<Record<keyof Settings, string | number | undefined>> = {},
) {
  return loadSettings({
    env: cliIo().env,
    configFile: options.config,
    overrides: { dataDir: options.dataDir, ...extra },
  });
}

/** What names a deployment on the command line: the same for `imaging start` and the commands that check it. */
export interface DeploymentOptions extends StoreOptions {
  port?: string;
  local?: boolean;
}

const LOCAL_HELP =
  "development on this machine: listen on loopback, base_url http://localhost:<port> unless PUBLIC_URL is set";

/** `--local` for the commands that look at a deployment rather than run it. */
export const STARTED_LOCAL_HELP =
  "the gateway was started with --local: base_url http://localhost:<port> unless PUBLIC_URL is set";

/** The flags of DeploymentOptions, worded the same wherever they appear. */
export function deploymentOptions(command: Command, localHelp = LOCAL_HELP): Command {
  return command
    .option("--data-dir <dir>", "data directory (default: IMAGING_DATA_DIR, else ./data)")
    .option("--port <n>", "user access port (default: PORT, else 8090 for http, 443 for https)")
    .option("--local", localHelp)
    .option("--config <file>", "JSON config file (default: IMAGING_CONFIG)");
}

/**
 * The deployment as `imaging start` runs it: settings from the command line, environment and file,
 * `--local` applied the one way the service applies it (runtime-config.ts).
 */
export function deploymentConfig(options: DeploymentOptions): Promise<RuntimeConfig> {
  return resolveRuntimeConfig(settingsFrom(options, { port: options.port }), {
    local: Boolean(options.local),
  });
}

/**
 * Opens the same store the service uses (SQLite WAL or PostgreSQL allow both at once). SQLite's reads
 * run on the command's own connection: a command reads one thing at a time, and a read worker thread
 * cost more to start (~0.15 s of CPU) than most commands' whole work.
 */
export async function withStore<T>(
  options: StoreOptions,
  work: (store: StoreHandle) => Promise<T>,
): Promise<T> {
  const settings = settingsFrom(options);
  refuseUnusedDefaultStore(options, settings);
  const store = await openStore({
    databaseUrl: settings.databaseUrl,
    sqliteFile: sqliteFileIn(settings.dataDir),
    readWorkers: 0,
    // A command waits as long as the service for a lock or a connection; its statements have no limit.
    waitTimeoutMs: settings.storeWaitTimeout * 1000,
  });
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

/**
 * A command run outside the service's folder would otherwise create an empty store in ./data and
 * answer from it (a scan "recorded" where no service reads it, 0 vulnerable packages). Only a store
 * that was named (--data-dir, IMAGING_DATA_DIR, a config file, DATABASE_URL) or already exists is opened.
 */
export function refuseUnusedDefaultStore(options: StoreOptions, settings: Settings): void {
  if (!isUnusedDefaultStore(options, settings)) return;
  throw new CliError(
    `no store here (${sqliteFileIn(settings.dataDir)} does not exist): run this where imaging-services runs, ` +
      "or name the service's store with --data-dir DIR, IMAGING_DATA_DIR or DATABASE_URL; a scan can go " +
      "to the running service with --server URL",
  );
}

/** True when the store would be the implicit ./data and nothing is there yet. */
export function isUnusedDefaultStore(options: StoreOptions, settings: Settings): boolean {
  const env = cliIo().env;
  const named =
    options.dataDir !== undefined ||
    Boolean(env.IMAGING_DATA_DIR) ||
    options.config !== undefined ||
    Boolean(env.IMAGING_CONFIG) ||
    settings.databaseUrl !== undefined;
  return !named && !existsSync(sqliteFileIn(settings.dataDir));
}
