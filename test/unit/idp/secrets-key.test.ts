import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { loadSecretsCipher } from "../../../src/idp/secrets-key.ts";
import { SecretsCipher, SecretsKeyError } from "../../../src/store/service-secrets.ts";

describe("the key sealing the store's secrets", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "imaging-secrets-key-"));
  after(() => rmSync(dataDir, { recursive: true, force: true }));
  const key = randomBytes(32);

  it("is read as base64, base64url or hex, from the setting or a file, to the same key", () => {
    const ids = [
      loadSecretsCipher({ dataDir, secretsKey: key.toString("base64") }),
      loadSecretsCipher({ dataDir, secretsKey: key.toString("base64url") }),
      loadSecretsCipher({ dataDir, secretsKey: key.toString("hex") }),
      (() => {
        const file = join(dataDir, "key.txt");
        writeFileSync(file, `${key.toString("base64")}\n`);
        return loadSecretsCipher({ dataDir, secretsKeyFile: file });
      })(),
    ].map((c) => c.keyId);
    assert.equal(new Set(ids).size, 1);
  });

  it("refuses anything but 32 bytes, without repeating the value", () => {
    for (const wrong of ["short", randomBytes(16).toString("base64"), randomBytes(33).toString("hex")]) {
      assert.throws(
        () => loadSecretsCipher({ dataDir, secretsKey: wrong }),
        (error: Error) =>
          /^IMAGING_SECRETS_KEY must hold 32 random bytes/.test(error.message) &&
          !error.message.includes(wrong),
      );
    }
  });

  it("is generated once in the data directory when none is configured (0600)", () => {
    const first = loadSecretsCipher({ dataDir });
    assert.equal(loadSecretsCipher({ dataDir }).keyId, first.keyId);
    const file = join(dataDir, "secrets", "store-secrets-key.secret");
    assert.equal(Buffer.from(readFileSync(file, "utf8").trim(), "base64url").length, 32);
    if (process.platform !== "win32") assert.equal(statSync(file).mode & 0o777, 0o600);
  });

  it("seals per name: a value opens under its own name only, and never with another key", () => {
    const cipher = new SecretsCipher(key, "test");
    const sealed = cipher.seal("idp-cookie-key", "the-value");
    assert.ok(!sealed.includes("the-value"));
    assert.notEqual(cipher.seal("idp-cookie-key", "the-value"), sealed, "a fresh IV each time");
    assert.equal(cipher.open("idp-cookie-key", { sealed, key_id: cipher.keyId }), "the-value");
    assert.throws(() => cipher.open("idp-csrf-key", { sealed, key_id: cipher.keyId }), /is damaged/);
    const other = new SecretsCipher(randomBytes(32), "IMAGING_SECRETS_KEY");
    assert.throws(
      () => other.open("idp-cookie-key", { sealed, key_id: cipher.keyId }),
      (error: Error) => error instanceof SecretsKeyError && /sealed with another key/.test(error.message),
    );
  });
});
