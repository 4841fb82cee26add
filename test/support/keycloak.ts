import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import {
  connectKeycloakAdmin,
  type KeycloakAdmin,
  PROVISIONING_REQUEST_TIMEOUT_MS,
} from "../../src/idp/keycloak/admin.ts";
import { freePort } from "./service.ts";
import { makeTestCertificates, type TestCertificates } from "./test-certificates.ts";

/**
 * A real Keycloak for the tests: the distribution from Maven Central (`.ci/install-keycloak`), run with
 * `kc.sh start-dev --features=cimd` under `/auth`, trusting a throwaway test CA so it can fetch client
 * metadata documents served over https by the tests. One server serves a whole test run (started by the
 * global setup, found through TEST_KEYCLOAK_* variables); a file run alone starts its own. Each suite
 * works in its own realm. When Keycloak cannot start the suites fail: they never skip.
 */
export const KEYCLOAK_VERSION = "26.7.4";
export const KEYCLOAK_ADMIN = { username: "kc-admin", password: "kc-admin-test-password" } as const;

export interface TestKeycloak {
  /** Base URL with the relative path, e.g. http://127.0.0.1:41234/auth. */
  url: string;
  /** The CA Keycloak trusts, and a server certificate for 127.0.0.1/localhost signed by it. */
  certificates: TestCertificates;
}

export function keycloakHome(): string {
  const home =
    process.env.KEYCLOAK_HOME ??
    join(homedir(), ".cache", "imaging-ci", "keycloak", `keycloak-${KEYCLOAK_VERSION}`);
  if (!existsSync(join(home, "bin", "kc.sh"))) {
    throw new Error(
      `No Keycloak distribution at ${home}: run 'bash .ci/install-keycloak' (or set KEYCLOAK_HOME)`,
    );
  }
  return home;
}

function certificatesIn(dir: string): TestCertificates {
  return {
    ca: readFileSync(join(dir, "ca.pem"), "utf8"),
    caFile: join(dir, "ca.pem"),
    certFile: join(dir, "server.pem"),
    keyFile: join(dir, "server.key"),
  };
}

export interface StartedKeycloak extends TestKeycloak {
  process: ChildProcess;
  /** Settles when the master realm answers; rejects with Keycloak's last log lines when it cannot start. */
  ready: Promise<void>;
  stop(): Promise<void>;
}

/**
 * JVM settings of the test server, appended to kc.sh's own (a later flag wins). It lives for one test run
 * on two cores shared with the suite: the client compiler alone (no C2: a server living a few minutes
 * never earns its compilations back) and the serial collector (no parallel GC threads beside a heap under
 * 768 MB) halved the CPU of its start, 30 s to 15 s, and made realm provisioning no dearer
 * (docs/benchmarks.md); nothing Keycloak serves depends on either.
 */
const TEST_KEYCLOAK_JVM = "-Xmx768m -XX:TieredStopAtLevel=1 -XX:-UseG1GC -XX:+UseSerialGC";

/**
 * Launches a fresh Keycloak (its dev database wiped) without waiting for it; its output goes to
 * `stateDir/keycloak.log` and its exit status to `stateDir/exit-status`, which waiters check.
 */
export async function launchKeycloak(options: {
  stateDir: string;
  timeoutMs?: number;
}): Promise<StartedKeycloak> {
  const home = keycloakHome();
  rmSync(options.stateDir, { recursive: true, force: true });
  mkdirSync(options.stateDir, { recursive: true });
  const certificates = makeTestCertificates(options.stateDir);
  // A fresh dev database each run (realms of earlier runs would otherwise pile up), kept in the state
  // directory rather than the distribution's data/ folder, so that two runs on one machine (two checkouts,
  // or a developer's Keycloak beside CI's) never share, lock or wipe each other's database.
  const database = join(options.stateDir, "h2", "keycloakdb");
  const [port, managementPort] = [await freePort(), await freePort()];
  const url = `http://127.0.0.1:${port}/auth`;
  const logFile = join(options.stateDir, "keycloak.log");
  const out = openSync(logFile, "a");
  // Above the suite's own processes (nice −10; root only, else GNU nice warns and runs it as is): the
  // Keycloak stands for an identity provider on its own machine, and while a load test saturates the two
  // cores a starved Keycloak made other files' realm provisioning and a restarted replica's key fetch
  // time out (CI rehearsals). Its threads inherit the priority from the start.
  const child = spawn(
    "nice",
    [
      "-n",
      "-10",
      join(home, "bin", "kc.sh"),
      "start-dev",
      `--http-port=${port}`,
      `--http-management-port=${managementPort}`,
      "--http-host=127.0.0.1",
      "--http-relative-path=/auth",
      "--features=cimd",
      `--db-url=jdbc:h2:file:${database};NON_KEYWORDS=VALUE`,
      `--truststore-paths=${certificates.caFile}`,
      // start-dev re-reads and re-parses the login theme's templates on every page (for theme authors);
      // the tests never change them, and cached they cost half the CPU per login page (docs/benchmarks.md)
      "--spi-theme--cache-themes=true",
      "--spi-theme--cache-templates=true",
    ],
    {
      env: {
        ...process.env,
        KC_BOOTSTRAP_ADMIN_USERNAME: KEYCLOAK_ADMIN.username,
        KC_BOOTSTRAP_ADMIN_PASSWORD: KEYCLOAK_ADMIN.password,
        JAVA_OPTS_APPEND: TEST_KEYCLOAK_JVM,
      },
      stdio: ["ignore", out, out],
      detached: true,
    },
  );
  closeSync(out);
  child.unref();
  let exited = false;
  child.on("exit", (code, signal) => {
    exited = true;
    writeFileSync(join(options.stateDir, "exit-status"), `${code ?? signal}`);
  });

  const stop = async () => {
    if (exited || child.pid === undefined) return;
    const gone = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    try {
      process.kill(-child.pid, "SIGTERM");
    } catch {
      return;
    }
    const timer = setTimeout(() => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      } catch {
        // already gone
      }
    }, 20_000);
    await gone;
    clearTimeout(timer);
  };
  const ready = waitUntilReady(url, options.stateDir, options.timeoutMs);
  ready.catch(() => undefined);
  return { url, certificates, process: child, ready, stop };
}

/** Starts a Keycloak and waits until it is ready. */
export async function startKeycloak(options: {
  stateDir: string;
  timeoutMs?: number;
}): Promise<StartedKeycloak> {
  const started = await launchKeycloak(options);
  try {
    await started.ready;
  } catch (error) {
    await started.stop();
    throw error;
  }
  return started;
}

let own: Promise<StartedKeycloak> | undefined;

/**
 * The run's Keycloak (TEST_KEYCLOAK_URL and TEST_KEYCLOAK_STATE_DIR, set by the global setup), else one
 * started for this test file and stopped when it ends.
 */
export async function useKeycloak(): Promise<TestKeycloak> {
  const url = process.env.TEST_KEYCLOAK_URL;
  const stateDir = process.env.TEST_KEYCLOAK_STATE_DIR;
  if (url && stateDir) {
    await waitUntilReady(url, stateDir);
    return { url, certificates: certificatesIn(stateDir) };
  }
  if (!own) {
    own = startKeycloak({ stateDir: join(process.cwd(), "test-artifacts", `keycloak-${process.pid}`) });
    const started = await own;
    process.once("exit", () => {
      try {
        if (started.process.pid !== undefined) process.kill(-started.process.pid, "SIGTERM");
      } catch {
        // already gone
      }
    });
  }
  return own;
}

/** Polls the master realm; fails at once when the server has exited, with the end of its log. */
async function waitUntilReady(url: string, stateDir: string, timeoutMs = 300_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const logTail = () => {
    try {
      return readFileSync(join(stateDir, "keycloak.log"), "utf8").slice(-4000);
    } catch {
      return "(no log)";
    }
  };
  let last = "";
  while (Date.now() < deadline) {
    if (existsSync(join(stateDir, "exit-status"))) {
      const status = readFileSync(join(stateDir, "exit-status"), "utf8");
      throw new Error(`Keycloak exited (${status}) before it was ready; end of its log:\n${logTail()}`);
    }
    try {
      const response = await fetch(`${url}/realms/master/.well-known/openid-configuration`, {
        signal: AbortSignal.timeout(2_000),
      });
      if (response.ok) return;
      last = `HTTP ${response.status}`;
    } catch (error) {
      last = (error as Error).message;
    }
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
  throw new Error(`Keycloak at ${url} was not ready in time (${last}); end of its log:\n${logTail()}`);
}

/** A realm name of its own for each suite, so suites sharing one Keycloak never see each other. */
export function uniqueRealm(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}${Math.floor(Math.random() * 1e4).toString(36)}`;
}

/** Settings of a deployment with IDP=keycloak on the test server, as loadSettings overrides. */
export function keycloakSettings(keycloak: TestKeycloak, realm: string) {
  return {
    idp: "keycloak",
    keycloakUrl: keycloak.url,
    keycloakRealm: realm,
    keycloakAdminUsername: KEYCLOAK_ADMIN.username,
    keycloakAdminPassword: KEYCLOAK_ADMIN.password,
  } as const;
}

/** The same deployment's environment, for `imaging ...` commands (runCli). */
export function keycloakEnv(
  keycloak: TestKeycloak,
  realm: string,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    IDP: "keycloak",
    KEYCLOAK_URL: keycloak.url,
    KEYCLOAK_REALM: realm,
    KEYCLOAK_ADMIN_USERNAME: KEYCLOAK_ADMIN.username,
    KEYCLOAK_ADMIN_PASSWORD: KEYCLOAK_ADMIN.password,
    ...extra,
  };
}

/**
 * An Admin API client of the test server's master administrator, working in `realm`; tests create realms
 * with it, so it has start-up provisioning's patience.
 */
export function connectTestAdmin(keycloak: TestKeycloak, realm: string): Promise<KeycloakAdmin> {
  return connectKeycloakAdmin(
    {
      keycloakUrl: keycloak.url,
      keycloakAdminRealm: "master",
      keycloakAdminUsername: KEYCLOAK_ADMIN.username,
      keycloakAdminPassword: KEYCLOAK_ADMIN.password,
      realm,
    },
    { timeoutMs: PROVISIONING_REQUEST_TIMEOUT_MS },
  );
}
