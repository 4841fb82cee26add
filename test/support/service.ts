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
    const handle = await openStore({ databaseUrl: store.databaseUrl, sqliteFile: store.sqliteFile });
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

/** A port free right now on loopback, for services whose public URL must name their real port. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
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
