import assert from "node:assert/strict";
import { generateKeyPairSync } from "node:crypto";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { calculateJwkThumbprint, type JWK } from "jose";
import { ensureSecretFile } from "../../src/idp/secrets.ts";
import { startIdpService } from "../support/idp-service.ts";
import { storedSecret, withVault } from "../support/stored-secrets.ts";
import { createTestStore, STORE_KINDS, type TestStore } from "../support/stores.ts";

/**
 * The secrets a data directory held before the store kept them are imported once; afterwards the
 * store is what counts. A wrong, malformed or missing key, or a damaged row, stops the start with one
 * line that names the fix and shows no secret.
 */
async function oldKeyFile(dataDir: string): Promise<string[]> {
  const keys = [];
  for (const status of ["current", "next"]) {
    const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const jwk = privateKey.export({ format: "jwk" }) as JWK;
    const kid = await calculateJwkThumbprint({ kty: jwk.kty, n: jwk.n, e: jwk.e } as JWK);
    keys.push({
      kid,
      status,
      createdAt: new Date().toISOString(),
      jwk: { ...jwk, kid, alg: "RS256", use: "sig" },
    });
  }
  mkdirSync(join(dataDir, "secrets"), { recursive: true, mode: 0o700 });
  writeFileSync(join(dataDir, "secrets", "idp-signing-keys.json"), JSON.stringify({ keys }), { mode: 0o600 });
  return keys.map((k) => k.kid);
}

const publishedKids = async (issuer: string) =>
  ((await (await fetch(`${issuer}/jwks`)).json()) as { keys: { kid: string }[] }).keys.map((k) => k.kid);

for (const kind of STORE_KINDS) {
  describe(`secrets of an existing data directory move into the store (${kind})`, () => {
    let store: TestStore;
    before(async () => {
      store = await createTestStore(kind);
    });
    after(() => store?.drop());

    it("imports the old files once, then the store wins even if the files change or go", async () => {
      const kids = await oldKeyFile(store.dataDir);
      const exchangeSecret = ensureSecretFile(store.dataDir, "mcp-token-exchange");
      const cookieKey = ensureSecretFile(store.dataDir, "idp-cookie-key");

      let idp = await startIdpService(store);
      try {
        assert.deepEqual(await publishedKids(idp.issuer), kids, "the old signing keys are published");
      } finally {
        await idp.stop();
      }
      assert.equal(await storedSecret(store, "mcp-token-exchange"), exchangeSecret);
      assert.equal(await storedSecret(store, "idp-cookie-key"), cookieKey);

      // The files are not read any more: replacing or removing them changes nothing.
      rmSync(join(store.dataDir, "secrets", "idp-signing-keys.json"));
      writeFileSync(join(store.dataDir, "secrets", "mcp-token-exchange.secret"), "something-else\n");
      idp = await startIdpService(store);
      try {
        assert.deepEqual(await publishedKids(idp.issuer), kids);
      } finally {
        await idp.stop();
      }
      assert.equal(await storedSecret(store, "mcp-token-exchange"), exchangeSecret);
    });

    it("refuses a malformed key with one line that does not repeat it", async () => {
      await assert.rejects(
        startIdpService(store, { overrides: { secretsKey: "not-a-key-4711" } }),
        (error: Error) => {
          assert.match(error.message, /^IMAGING_SECRETS_KEY must hold 32 random bytes in base64 or hex/);
          assert.ok(!error.message.includes("not-a-key-4711"));
          assert.ok(!error.message.includes("\n"));
          return true;
        },
      );
    });

    it("refuses an unreadable key file, naming the setting", async () => {
      await assert.rejects(
        startIdpService(store, { overrides: { secretsKeyFile: join(store.dataDir, "missing.key") } }),
        /IMAGING_SECRETS_KEY_FILE: cannot read .*missing\.key: ENOENT$/,
      );
    });

    it("tells a damaged row from a wrong key, naming the fix", async () => {
      await withVault(store, (vault) =>
        vault.db
          .withTables<{ service_secrets: { name: string; sealed: string } }>()
          .updateTable("service_secrets")
          .set({ sealed: "v1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" })
          .where("name", "=", "idp-csrf-key")
          .execute(),
      );
      await assert.rejects(
        startIdpService(store),
        /The store's secret idp-csrf-key is damaged .*delete its row to generate a new secret/,
      );
    });
  });
}
