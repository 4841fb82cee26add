import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { ensureSecretFile, readSecretFile, secretFilePath } from "../../../src/idp/secrets.ts";

describe("generated secret files", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "imaging-secrets-"));
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  it("generates a 32-byte base64url secret once, into <dataDir>/secrets/<name>.secret", () => {
    assert.equal(readSecretFile(dataDir, "mcp-token-exchange"), undefined);
    const secret = ensureSecretFile(dataDir, "mcp-token-exchange");
    assert.match(secret, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(Buffer.from(secret, "base64url").length, 32);
    const file = join(dataDir, "secrets", "mcp-token-exchange.secret");
    assert.equal(secretFilePath(dataDir, "mcp-token-exchange"), file);
    // The gateway reads the file and trims it (src/service.ts).
    assert.equal(readFileSync(file, "utf8").trim(), secret);
    assert.equal(ensureSecretFile(dataDir, "mcp-token-exchange"), secret);
    assert.equal(readSecretFile(dataDir, "mcp-token-exchange"), secret);
  });

  it("keeps the file private: 0600 in a 0700 directory", { skip: process.platform === "win32" }, () => {
    ensureSecretFile(dataDir, "private-check");
    assert.equal(statSync(join(dataDir, "secrets")).mode & 0o777, 0o700);
    assert.equal(statSync(join(dataDir, "secrets", "private-check.secret")).mode & 0o777, 0o600);
  });

  it("gives each name its own secret, and keeps an existing one written by hand", () => {
    writeFileSync(join(dataDir, "secrets", "configured.secret"), "  from-the-operator\n", { mode: 0o600 });
    assert.equal(ensureSecretFile(dataDir, "configured"), "from-the-operator");
    assert.notEqual(ensureSecretFile(dataDir, "one"), ensureSecretFile(dataDir, "two"));
  });

  it("agrees when many callers race for the same new secret", async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, () => Promise.resolve().then(() => ensureSecretFile(dataDir, "raced"))),
    );
    assert.equal(new Set(results).size, 1);
  });

  it("refuses names that would leave the secrets directory", () => {
    for (const name of ["../escape", "a/b", ".hidden", ""]) {
      assert.throws(() => ensureSecretFile(dataDir, name), /Invalid secret name/);
    }
  });

  it("says what to do with an empty secret file", () => {
    writeFileSync(join(dataDir, "secrets", "empty.secret"), "\n");
    assert.throws(() => ensureSecretFile(dataDir, "empty"), /is empty: delete it/);
  });
});
