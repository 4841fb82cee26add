import { loadSettings } from "../config/load-config.ts";
import { sqliteFileIn } from "../config/runtime-config.ts";
import type { Settings } from "../config/settings.ts";
import { openStore, type StoreHandle } from "../store/database.ts";

export interface StoreOptions {
  dataDir?: string;
  config?: string;
}

export function settingsFrom(
  options: StoreOptions,
  extra: Partial<Record<keyof Settings, string | number | undefined>> = {},
) {
  return loadSettings({ configFile: options.config, overrides: { dataDir: options.dataDir, ...extra } });
}

/** Opens the same store the service uses (SQLite WAL or PostgreSQL allow both at once). */
export async function withStore<T>(
  options: StoreOptions,
  work: (store: StoreHandle) => Promise<T>,
): Promise<T> {
  const settings = settingsFrom(options);
  const store = await openStore({
    databaseUrl: settings.databaseUrl,
    sqliteFile: sqliteFileIn(settings.dataDir),
  });
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}
