import { secretVault } from "../../src/idp/secrets-key.ts";
import { readStoredSecret } from "../../src/idp/stored-secrets.ts";
import { openStore } from "../../src/store/database.ts";
import type { SecretVault } from "../../src/store/service-secrets.ts";
import type { TestStore } from "./stores.ts";

/** Works on a test store's sealed secrets with the key its service uses (generated in its data directory). */
export async function withVault<T>(
  store: TestStore,
  work: (vault: SecretVault) => Promise<T>,
  settings: { secretsKey?: string } = {},
): Promise<T> {
  // A few lookups: on the handle's own connection, no read worker thread to start.
  const handle = await openStore({
    databaseUrl: store.databaseUrl,
    sqliteFile: store.sqliteFile,
    readWorkers: 0,
  });
  try {
    return await work(secretVault(handle.db, { dataDir: store.dataDir, ...settings }));
  } finally {
    await handle.close();
  }
}

/** A secret the service keeps in the store (e.g. `mcp-token-exchange`), as the service reads it. */
export function storedSecret(store: TestStore, name: string, settings: { secretsKey?: string } = {}) {
  return withVault(
    store,
    async (vault) => {
      const value = await readStoredSecret(vault, name);
      if (value === undefined) throw new Error(`the store holds no secret ${name}`);
      return value;
    },
    settings,
  );
}
