import { readFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { createServer } from "node:net";
import { loadSettings } from "../../src/config/load-config.ts";
import { resolveRuntimeConfig } from "../../src/config/runtime-config.ts";
import type { Settings } from "../../src/config/settings.ts";
import { type Part, type RunningService, startService } from "../../src/service.ts";
import { openStore, type StoreHandle } from "../../src/store/database.ts";
import type { TestStore } from "./stores.ts";

/** Starts the real service (gateway + REST API on ephemeral loopback ports) over a test store. */
export async function startTestService(
  store: TestStore,
  overrides: Partial<Record<keyof Settings, string | number | undefined>> = {},
  seed?: (store: StoreHandle) => Promise<void>,
  only?: readonly Part[],
): Promise<RunningService> {
  if (seed) {
    // The seed's reads on its own connection: a read worker thread (~0.15 s of CPU to start) for a few
    // lookups; the service opens the store again with its read workers.
    const handle = await openStore({
      databaseUrl: store.databaseUrl,
      sqliteFile: store.sqliteFile,
      readWorkers: 0,
    });
    try {
      await seed(handle);
    } finally {
      await handle.close();
    }
  }
  const settings = loadSettings({
    env: {},
    overrides: {
      dataDir: store.dataDir,
      databaseUrl: store.databaseUrl,
      port: 0,
      restPort: 0,
      mcpAnalysisPort: 0,
      mcpGatekeeperPort: 0,
      bindAddress: "127.0.0.1",
      publicUrl: "http://127.0.0.1:8090",
      logLevel: "silent",
      ...overrides,
    },
  });
  return startService(await resolveRuntimeConfig(settings), { only });
}

/**
 * Where freePort picks: below the kernel's ephemeral range. The suite runs files side by side, and a port
 * picked from that range (by listening on port 0) can be handed by the kernel to another process's port-0
 * listener or outgoing connection before the service binds it ("Port … is already in use"). Below it,
 * only another freePort could pick the same port, at random among thousands and never twice in a process.
 */
function pickRange(): [number, number] {
  try {
    const [low] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8")
      .trim()
      .split(/\s+/)
      .map(Number);
    if (low !== undefined && low > 12_000) return [10_000, low];
  } catch {
    // not Linux: the kernel's port 0 below
  }
  return [0, 0];
}
const [PICK_LOW, PICK_HIGH] = pickRange();
const picked = new Set<number>();

async function bindable(port: number): Promise<number | undefined> {
  const server = createServer();
  const bound = await new Promise<boolean>((resolve) => {
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => resolve(true));
  });
  if (!bound) return undefined;
  const { port: actual } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return actual;
}

/** A port free right now on loopback, for services whose public URL must name their real port. */
export async function freePort(): Promise<number> {
  for (let attempt = 0; PICK_HIGH > PICK_LOW && attempt < 50; attempt++) {
    const candidate = PICK_LOW + Math.floor(Math.random() * (PICK_HIGH - PICK_LOW));
    if (picked.has(candidate)) continue;
    const port = await bindable(candidate);
    if (port !== undefined) {
      picked.add(port);
      return port;
    }
  }
  const port = await bindable(0);
  if (port === undefined) throw new Error("freePort: cannot listen on 127.0.0.1");
  return port;
}

/**
 * Ports for a service's internal parts when its gateway keeps a fixed port across restarts: with port 0
 * they bind first, and the system may hand one of them the gateway port a restart just freed.
 */
export async function internalPortsBeside(gatewayPort: number) {
  const pick = async (): Promise<number> => {
    for (;;) {
      const candidate = await freePort();
      if (candidate !== gatewayPort) return candidate;
    }
  };
  return { restPort: await pick(), mcpAnalysisPort: await pick(), mcpGatekeeperPort: await pick() };
}
