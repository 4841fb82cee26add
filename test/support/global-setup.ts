import { join } from "node:path";
import { buildConsole } from "../../scripts/build-console.ts";
import { launchKeycloak, type StartedKeycloak } from "./keycloak.ts";

/**
 * Starts the run's Keycloak in the background while the first suites run (it takes about a minute on
 * two cores); suites that need it wait for it through useKeycloak(). Launch failures (no distribution)
 * are left for those suites to report, so the rest of the run still tells what it can.
 */
let keycloak: StartedKeycloak | undefined;

export async function globalSetup(): Promise<void> {
  // The web console's bundle, served by every gateway the suites start (a fresh clone has none).
  if (process.env.IMAGING_CONSOLE_BUILT !== "1") await buildConsole();
  process.env.IMAGING_CONSOLE_BUILT = "1";
  // A Keycloak already given (TEST_KEYCLOAK_URL and TEST_KEYCLOAK_STATE_DIR) serves this run too.
  if (process.env.TEST_KEYCLOAK_URL && process.env.TEST_KEYCLOAK_STATE_DIR) return;
  const stateDir = join(process.cwd(), "test-artifacts", "keycloak");
  try {
    keycloak = await launchKeycloak({ stateDir });
    process.env.TEST_KEYCLOAK_URL = keycloak.url;
    process.env.TEST_KEYCLOAK_STATE_DIR = stateDir;
  } catch (error) {
    process.stderr.write(`global setup: Keycloak not launched: ${(error as Error).message}\n`);
  }
}

export async function globalTeardown(): Promise<void> {
  await keycloak?.stop();
}
