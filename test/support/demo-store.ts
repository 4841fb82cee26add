import { loadDemo } from "../../src/scanner/demo/load-demo.ts";
import { openStore } from "../../src/store/database.ts";
import { createTestStore, type TestStore } from "./stores.ts";

/**
 * A fresh test store with the demo analyses loaded, closed again so that the service under test opens it
 * as its own. Apart from stores.ts, which most files import without needing the demo's modules.
 */
export async function createDemoStore(kind: "sqlite" | "postgres"): Promise<TestStore> {
  const store = await createTestStore(kind);
  const handle = await openStore({ databaseUrl: store.databaseUrl, sqliteFile: store.sqliteFile });
  try {
    await loadDemo(handle.db);
  } finally {
    await handle.close();
  }
  return store;
}
