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

  describe("never repeats a secret in a message", () => {
    const PASSWORD = "S3cret-Db-Passw0rd";
    const messageOf = (run: () => unknown) => {
      try {
        run();
      } catch (error) {
        assert.ok(error instanceof ConfigError, String(error));
        return error.message;
      }
      assert.fail("the configuration was accepted");
    };

    it("a DATABASE_URL with a password: the password is masked, the rest named", () => {
      const message = messageOf(() =>
        loadSettings({ env: { DATABASE_URL: `mysql://imaging:${PASSWORD}@db.example.com:3306/imaging` } }),
      );
      assert.ok(!message.includes(PASSWORD), message);
      assert.match(message, /DATABASE_URL from environment: a postgres:\/\//);
      assert.match(message, /mysql:\/\/imaging:\*\*\*@db\.example\.com:3306\/imaging/);
    });

    it("a password containing '@' is masked whole", () => {
      const message = messageOf(() => loadSettings({ env: { DATABASE_URL: "mysql://u:p@ss@word@db/x" } }));
      assert.ok(!message.includes("ss@word"), message);
      assert.match(message, /mysql:\/\/u:\*\*\*@db\/x/);
    });

    it("a secret of the wrong type in a config file: its type, never its value", () => {
      for (const [key, value] of [
        ["keycloakAdminPassword", 987654321],
        ["tokenExchangeClientSecret", ["s3cr3t-in-an-array"]],
        ["keycloakAdminClientSecret", { value: "s3cr3t-in-an-object" }],
      ] as const) {
        const message = messageOf(() =>
          loadSettings({ env: {}, configFile: file(JSON.stringify({ [key]: value })) }),
        );
        assert.match(message, new RegExp(`${key} from config file: `));
        assert.match(message, /a secret's value is not shown/);
        for (const leaked of ["987654321", "s3cr3t-in-an-array", "s3cr3t-in-an-object"]) {
          assert.ok(!message.includes(leaked), message);
        }
      }
    });

    it("a config file that is not valid JSON: where, not the text around it", () => {
      const message = messageOf(() =>
        loadSettings({ env: {}, configFile: file('{\n  "keycloakAdminPassword": "Sup3r-S3cret" oops\n}') }),
      );
      assert.ok(!message.includes("Sup3r-S3cret"), message);
      assert.match(message, /is not valid JSON at line 2, column \d+/);
    });

    it("URL credentials in other settings (PUBLIC_URL, KEYCLOAK_URL) are masked", async () => {
      await assert.rejects(
        resolveRuntimeConfig(
          loadSettings({ env: { PUBLIC_URL: `http://admin:${PASSWORD}@gw.example.com:8090` } }),
          {
            fqdn: "gw",
            platform: "linux",
          },
        ),
        (error: Error) =>
          error instanceof ConfigError &&
          !error.message.includes(PASSWORD) &&
          /PUBLIC_URL must be .*no path, query, fragment or credentials, got "http:\/\/admin:\*\*\*@gw/.test(
            error.message,
          ),
      );
      const message = messageOf(() =>
        loadSettings({ env: { KEYCLOAK_URL: `ftp://svc:${PASSWORD}@kc.example.com/auth` } }),
      );
      assert.ok(!message.includes(PASSWORD), message);
    });
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
