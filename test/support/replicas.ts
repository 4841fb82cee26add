import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SETTINGS } from "../../src/config/settings.ts";
import { CLI, spawnService } from "./cli.ts";
import { HEALTH_PATH, type RunningHaproxy, startHaproxy } from "./haproxy.ts";
import { freePort, internalPortsBeside } from "./service.ts";

export interface Replica {
  name: string;
  /** The replica's own gateway address (tests talk to it through HAProxy, pinned by name). */
  direct: string;
  port: number;
  /** The replica's analysis MCP server (an internal port; the gateway's upstream). */
  mcpAnalysisPort: number;
  /** Its metrics listener's `/metrics`, when METRICS_PORT is set. */
  metrics: string | undefined;
  child: ChildProcess;
  stderr(): string;
}

export interface ReplicaSet {
  haproxy: RunningHaproxy;
  /** base_url: HAProxy's address, the PUBLIC_URL of every replica. */
  base: string;
  replicas: Replica[];
  /** kill -9: no graceful stop, no connection drained. */
  kill(name: string): Promise<void>;
  /**
   * Starts a killed or stopped replica again on its port, with its environment (and `cli`, another
   * build's `imaging` entry, when given); HAProxy's checks bring it back.
   */
  restart(name: string, options?: { cli?: string }): Promise<Replica>;
  /** SIGTERM, as a service manager stops it: resolves with its exit code once it has exited. */
  terminate(name: string): Promise<number | null>;
  stop(): Promise<void>;
}

/**
 * `count` real `imaging start` processes (named a, b, c, ...) on loopback ports, each with a data
 * directory of its own (nothing shared on disk: what they share is `env`'s store and identity provider),
 * behind a real HAProxy whose address is their PUBLIC_URL.
 */
export async function startReplicas(options: {
  count: number;
  env: Record<string, string>;
  pinnable?: boolean;
}): Promise<ReplicaSet> {
  // Stopped with SIGTERM, a replica drains as it would behind the shipped HAProxy configuration: the
  // setting's default, which the test configuration's checks are tuned to (test/support/haproxy.ts).
  const drain = String(SETTINGS.shutdownDrain.schema.parse(undefined));
  const haproxyPort = await freePort();
  const base = `http://127.0.0.1:${haproxyPort}`;
  const names = Array.from({ length: options.count }, (_, i) => String.fromCharCode(97 + i));
  const ports = new Map<string, number>();
  for (const name of names) ports.set(name, await freePort());
  const dataDirs = new Map(
    names.map((name) => [name, mkdtempSync(join(tmpdir(), `imaging-replica-${name}-`))]),
  );
  // A restart under full load on a small machine takes far longer than a start on an idle one.
  const launch = async (name: string, startTimeoutMs = 90_000, cli = CLI): Promise<Replica> => {
    const port = ports.get(name) as number;
    const internal = await internalPortsBeside(port);
    const started = await spawnService(
      [],
      {
        SHUTDOWN_DRAIN: drain,
        ...options.env,
        PUBLIC_URL: base,
        PORT: String(port),
        REST_PORT: String(internal.restPort),
        MCP_ANALYSIS_PORT: String(internal.mcpAnalysisPort),
        MCP_GATEKEEPER_PORT: String(internal.mcpGatekeeperPort),
        IMAGING_BIND_ADDRESS: "127.0.0.1",
        IMAGING_DATA_DIR: dataDirs.get(name) as string,
      },
      startTimeoutMs,
      cli,
    );
    return {
      name,
      direct: `http://127.0.0.1:${port}`,
      port,
      mcpAnalysisPort: internal.mcpAnalysisPort,
      metrics: started.summary.metrics ?? undefined,
      child: started.child,
      stderr: started.stderr,
    };
  };
  const replicas: Replica[] = [];
  let haproxy: RunningHaproxy | undefined;
  try {
    // The first alone (it runs the migrations and provisioning), then the others: they find them done.
    // With the embedded provider the others start at once, their start-ups overlapping. With Keycloak
    // one after the other: each provisions the realm again through Keycloak's Admin API, and two at once
    // against the test's dev Keycloak on a loaded machine once timed out (15 s Admin API timeout).
    const [first, ...others] = names;
    replicas.push(await launch(first as string));
    if (options.env.IDP === "keycloak") {
      for (const name of others) replicas.push(await launch(name));
    } else {
      const started = await Promise.allSettled(others.map((name) => launch(name)));
      for (const result of started) if (result.status === "fulfilled") replicas.push(result.value);
      const failed = started.find((result) => result.status === "rejected");
      if (failed) throw failed.reason;
    }
    haproxy = await startHaproxy({
      port: haproxyPort,
      pinnable: options.pinnable,
      healthPath: await healthPathOf(replicas[0] as Replica),
      backends: names.map((name) => ({ name, port: ports.get(name) as number })),
    });
    for (const name of names) await haproxy.waitFor(name, "UP");
  } catch (error) {
    for (const r of replicas) r.child.kill("SIGKILL");
    await haproxy?.stop();
    throw error;
  }
  const find = (name: string) => {
    const index = replicas.findIndex((r) => r.name === name);
    if (index < 0) throw new Error(`no replica ${name}`);
    return index;
  };
  const stopChild = async (child: ChildProcess, signal: NodeJS.Signals) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, "exit");
    child.kill(signal);
    await exited;
  };
  const lb = haproxy;
  return {
    haproxy: lb,
    base,
    replicas,
    async kill(name) {
      await stopChild((replicas[find(name)] as Replica).child, "SIGKILL");
    },
    async restart(name, restartOptions = {}) {
      const replica = await launch(name, 120_000, restartOptions.cli);
      replicas[find(name)] = replica;
      return replica;
    },
    async terminate(name) {
      const { child } = replicas[find(name)] as Replica;
      await stopChild(child, "SIGTERM");
      return child.exitCode;
    },
    async stop() {
      await Promise.all(replicas.map((r) => stopChild(r.child, "SIGTERM")));
      await lb.stop();
      for (const dir of dataDirs.values()) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The readiness endpoint (`/readyz`: the store and every upstream answer) when the build has it, else the
 * gateway's older `/mcp/healthcheck` (which answers 200 even when an upstream is down).
 */
async function healthPathOf(replica: Replica): Promise<string> {
  const response = await fetch(`${replica.direct}/readyz`).catch(() => undefined);
  await response?.body?.cancel();
  return response?.status === 200 ? "/readyz" : HEALTH_PATH;
}
