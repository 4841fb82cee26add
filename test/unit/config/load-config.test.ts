import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { ConfigError, loadSettings } from "../../../src/config/load-config.ts";
import { resolveRuntimeConfig } from "../../../src/config/runtime-config.ts";

const file = (content: string) => {
  const path = join(mkdtempSync(join(tmpdir(), "imaging-config-")), "config.json");
  writeFileSync(path, content);
  return path;
};

describe("configuration", () => {
  it("applies defaults", () => {
    const settings = loadSettings({ env: {} });
    assert.equal(settings.dataDir, "./data");
    assert.equal(settings.realm, "imaging");
    assert.equal(settings.restPort, 8070);
    assert.equal(settings.port, undefined);
  });

  it("layers config file < environment < command line", () => {
    const path = file(JSON.stringify({ dataDir: "/from/file", realm: "filerealm", restPort: 9000 }));
    const settings = loadSettings({
      env: { IMAGING_CONFIG: path, IMAGING_DATA_DIR: "/from/env", REST_PORT: "9100" },
      overrides: { dataDir: "/from/flag" },
    });
    assert.equal(settings.dataDir, "/from/flag");
    assert.equal(settings.restPort, 9100);
    assert.equal(settings.realm, "filerealm");
  });

  it("names the bad environment variable and what it expects", () => {
    assert.throws(
      () => loadSettings({ env: { PORT: "http" } }),
      (error: Error) =>
        error instanceof ConfigError && /PORT from environment: .*number.*\(got "http"\)/.test(error.message),
    );
    assert.throws(
      () => loadSettings({ env: { DATABASE_URL: "mysql://x" } }),
      /DATABASE_URL from environment: a postgres:\/\//,
    );
    assert.throws(() => loadSettings({ env: { LOG_LEVEL: "loud" } }), /LOG_LEVEL from environment/);
  });

  it("names unknown keys of the config file, and invalid JSON", () => {
    assert.throws(
      () => loadSettings({ env: {}, configFile: file('{"dataDri": "x"}') }),
      /unknown key\(s\) dataDri; known keys: dataDir/,
    );
    assert.throws(() => loadSettings({ env: {}, configFile: file("{nope") }), /is not valid JSON/);
    assert.throws(
      () => loadSettings({ env: {}, configFile: "/does/not/exist.json" }),
      /Cannot read config file/,
    );
  });

  it("requires TLS certificate and key together", async () => {
    await assert.rejects(
      resolveRuntimeConfig(loadSettings({ env: { TLS_CERT_FILE: "/c.pem" } }), {
        fqdn: "gw",
        platform: "linux",
      }),
      /TLS_CERT_FILE and TLS_KEY_FILE must be set together/,
    );
  });

  it("derives the issuer from base_url and realm", async () => {
    const config = await resolveRuntimeConfig(loadSettings({ env: {} }), {
      fqdn: "gw.example.com",
      platform: "linux",
    });
    assert.equal(config.baseUrl, "http://gw.example.com:8090");
    assert.equal(config.issuer, "http://gw.example.com:8090/auth/realms/imaging");
    assert.equal(config.port, 8090);
  });

  it("refuses to start on Windows over http without PUBLIC_URL", async () => {
    await assert.rejects(
      resolveRuntimeConfig(loadSettings({ env: {} }), { fqdn: "winhost", platform: "win32" }),
      (error: Error) => error instanceof ConfigError && /PUBLIC_URL is not set/.test(error.message),
    );
  });

  it("--local changes only the bind address and the default base_url: PORT, --port and PUBLIC_URL still apply", async () => {
    const fromEnv = await resolveRuntimeConfig(
      loadSettings({ env: { PORT: "18100", IMAGING_BIND_ADDRESS: "0.0.0.0", REST_PORT: "18101" } }),
      { fqdn: "gw.example.com", platform: "linux", local: true },
    );
    assert.equal(fromEnv.port, 18100);
    assert.equal(fromEnv.baseUrl, "http://localhost:18100");
    assert.equal(fromEnv.issuer, "http://localhost:18100/auth/realms/imaging");
    assert.equal(fromEnv.bindAddress, "127.0.0.1");
    assert.equal(fromEnv.restPort, 18101);
    const fromFlag = await resolveRuntimeConfig(
      loadSettings({ env: { PORT: "18100" }, overrides: { port: "18200" } }),
      { platform: "linux", local: true },
    );
    assert.equal(fromFlag.baseUrl, "http://localhost:18200");
    const published = await resolveRuntimeConfig(
      loadSettings({ env: { PUBLIC_URL: "http://gw.example.com:18100", PORT: "18100" } }),
      { platform: "linux", local: true },
    );
    assert.equal(published.baseUrl, "http://gw.example.com:18100");
    assert.equal(published.bindAddress, "127.0.0.1");
  });
});
