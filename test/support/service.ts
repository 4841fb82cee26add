import { loadSettings } from "../../src/config/load-config.ts";
import { resolveRuntimeConfig } from "../../src/config/runtime-config.ts";
import type { Settings } from "../../src/config/settings.ts";
import { type RunningService, startService } from "../../src/service.ts";
import { openStore, type StoreHandle } from "../../src/store/database.ts";
import type { TestStore } from "./stores.ts";

/** Starts the real service (gateway + REST API on ephemeral loopback ports) over a test store. */
export async function startTestService(
  store: TestStore,
  overrides: Partial<Record<keyof Settings, string | number | undefined>> = {},
  seed?: (store: StoreHandle) => Promise<void>,
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
      bindAddress: "127.0.0.1",
      publicUrl: "http://127.0.0.1:8090",
      logLevel: "silent",
      ...overrides,
    },
  });
  return startService(await resolveRuntimeConfig(settings));
}
