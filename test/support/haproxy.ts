import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./service.ts";

/** Debian's HAProxy (`.ci/run` installs the `haproxy` package); its binary lives in /usr/sbin. */
export const HAPROXY = process.env.IMAGING_TEST_HAPROXY ?? "/usr/sbin/haproxy";

/**
 * The request header a test sends to pin one request to a named replica ("sign in through A"). Only the
 * test configuration honours it: the deployment example's HAProxy has no such rule.
 */
export const PIN_HEADER = "x-test-replica";

export interface HaproxyBackend {
  name: string;
  port: number;
}

export type ServerState = "UP" | "DOWN" | "MAINT" | "NOLB" | "no check" | string;

export interface RunningHaproxy {
  /** The load balancer's address: every replica's PUBLIC_URL. */
  url: string;
  port: number;
  process: ChildProcess;
  /** The health-check status HAProxy reports for each server, from its stats page (CSV). */
  states(): Promise<Record<string, ServerState>>;
  /** HAProxy's log so far: server state changes and failed requests. */
  log(): string;
  /** Waits until HAProxy's health checks report `name` in `state`. */
  waitFor(name: string, state: "UP" | "DOWN", timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

/** The health-check route HAProxy probes on each replica. */
export const HEALTH_PATH = "/mcp/healthcheck";

/**
 * The configuration of the tests and the benchmark, tuned as deploy/haproxy/haproxy.cfg (docs/deployment.md):
 *
 * - round robin over the replicas that are ready (`/readyz`), checked every second and every 500 ms while
 *   a state changes: two failures take a replica out (at most 1.5 s after it starts draining, within the
 *   service's SHUTDOWN_DRAIN), two successes bring it back;
 * - when none is ready (the database they share is down: every `/readyz` fails), the requests go to the
 *   replicas that are alive (`/livez`), which answer 503 with Retry-After for what needs the database and
 *   serve the rest, instead of HAProxy's own 503 for everything;
 * - a connection that fails (a replica just gone, not yet marked down) retried on another server, which is
 *   safe because nothing was sent yet; a refused connection takes the replica out at once (observe layer4);
 * - a server marked down keeps its requests in flight (no `on-marked-down shutdown-sessions`): a draining
 *   replica finishes them.
 */
export function haproxyConfig(options: {
  port: number;
  statsPort: number;
  backends: readonly HaproxyBackend[];
  pinnable?: boolean;
  healthPath?: string;
  maxconn?: number;
}): string {
  const healthPath = options.healthPath ?? HEALTH_PATH;
  // Builds without /readyz have no /livez either: their one health route serves both backends.
  const livePath = healthPath === "/readyz" ? "/livez" : healthPath;
  const servers = options.backends.map((b, i) => `  server ${b.name} 127.0.0.1:${b.port} id ${i + 1}`);
  const pins = options.pinnable
    ? options.backends.map((b) => `  use-server ${b.name} if { req.hdr(${PIN_HEADER}) -m str ${b.name} }`)
    : [];
  // Each replica gets at most 64 requests at once, the rest wait in HAProxy's queue: an overloaded
  // replica answers its health check late and would be taken out, sending its load to the others.
  const serverDefaults =
    "  default-server check inter 1s fastinter 500ms fall 2 rise 2 maxconn 64 observe layer4 error-limit 1 on-error mark-down";
  return [
    "global",
    `  maxconn ${options.maxconn ?? 4096}`,
    // Health changes and failed requests only, to stderr: what a test reports when it fails.
    "  log stderr format raw local0 info",
    "defaults",
    "  mode http",
    "  log global",
    "  option httplog",
    "  option dontlog-normal",
    "  timeout connect 2s",
    "  timeout client 65s",
    "  timeout server 65s",
    "  timeout http-keep-alive 10s",
    "  option http-keep-alive",
    "  retries 3",
    "  option redispatch",
    "  retry-on conn-failure",
    "  timeout queue 30s",
    "  timeout check 5s",
    "frontend imaging",
    `  bind 127.0.0.1:${options.port}`,
    "  use_backend replicas if { nbsrv(replicas) gt 0 }",
    "  default_backend alive",
    "frontend stats",
    `  bind 127.0.0.1:${options.statsPort}`,
    "  stats enable",
    "  stats uri /stats",
    "backend replicas",
    "  balance roundrobin",
    // 2025-era sessions stay on the replica that created them (docs/deployment.md), as in deploy/.
    "  stick-table type string len 128 size 100k expire 30m",
    "  stick match req.hdr(mcp-session-id)",
    "  stick store-response res.hdr(mcp-session-id)",
    `  option httpchk GET ${healthPath}`,
    "  http-check expect status 200",
    serverDefaults,
    ...pins,
    ...servers,
    "backend alive",
    "  balance roundrobin",
    "  stick match req.hdr(mcp-session-id) table replicas",
    "  stick store-response res.hdr(mcp-session-id) table replicas",
    `  option httpchk GET ${livePath}`,
    "  http-check expect status 200",
    serverDefaults,
    ...pins,
    ...servers,
    "",
  ].join("\n");
}

/** Starts HAProxy in the foreground (-db) in front of `backends`; checks its configuration first. */
export async function startHaproxy(options: {
  backends: readonly HaproxyBackend[];
  /** The front port (a replica's PUBLIC_URL must name it before the replicas start); free one otherwise. */
  port?: number;
  pinnable?: boolean;
  healthPath?: string;
}): Promise<RunningHaproxy> {
  if (!existsSync(HAPROXY)) {
    throw new Error(`No HAProxy at ${HAPROXY}: run 'bash .ci/run' (apt-get install haproxy)`);
  }
  const dir = mkdtempSync(join(tmpdir(), "imaging-haproxy-"));
  const port = options.port ?? (await freePort());
  const statsPort = await freePort();
  const file = join(dir, "haproxy.cfg");
  writeFileSync(file, haproxyConfig({ ...options, port, statsPort }));
  execFileSync(HAPROXY, ["-c", "-q", "-f", file]);
  const child = spawn(HAPROXY, ["-db", "-f", file], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr?.on("data", (d) => {
    stderr += d;
  });
  const url = `http://127.0.0.1:${port}`;
  const states = async (): Promise<Record<string, ServerState>> => {
    const response = await fetch(`http://127.0.0.1:${statsPort}/stats;csv`);
    const [header = "", ...rows] = (await response.text()).replace(/^# /, "").trim().split("\n");
    const columns = header.split(",");
    const at = (row: string[], name: string) => row[columns.indexOf(name)] ?? "";
    const result: Record<string, ServerState> = {};
    for (const line of rows) {
      const row = line.split(",");
      if (at(row, "pxname") === "replicas" && !["FRONTEND", "BACKEND"].includes(at(row, "svname"))) {
        result[at(row, "svname")] = at(row, "status").split(" ")[0] ?? "";
      }
    }
    return result;
  };
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`HAProxy exited with ${child.exitCode}: ${stderr}`);
    try {
      await states();
      break;
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`HAProxy did not start: ${stderr}`, { cause: error });
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    url,
    port,
    process: child,
    states,
    log: () => stderr,
    async waitFor(name, state, timeoutMs = 20_000) {
      const until = Date.now() + timeoutMs;
      let last: ServerState | undefined;
      while (Date.now() < until) {
        last = (await states())[name];
        if (last === state) return;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`HAProxy reports server ${name} ${last}, not ${state}, after ${timeoutMs} ms`);
    },
    async stop() {
      if (child.exitCode === null) {
        child.kill("SIGTERM");
        await once(child, "exit");
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
