import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { runCli } from "../support/cli.ts";
import { postgresAdminUrl } from "../support/stores.ts";

/**
 * What an operator sees (and pastes into a ticket) when the configuration is wrong: one line naming
 * the setting, never the secret it holds.
 */
describe("configuration errors of the imaging command hide secrets", () => {
  const PASSWORD = "Sup3r-S3cret-Passw0rd";
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "imaging-config-errors-"));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const refused = async (args: string[], env: NodeJS.ProcessEnv) => {
    const result = await runCli(args, { IMAGING_DATA_DIR: join(dir, "data"), ...env });
    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stderr, /^imaging: /);
    assert.ok(!`${result.stdout}${result.stderr}`.includes(PASSWORD), result.stderr);
    return result.stderr;
  };

  it("a DATABASE_URL of the wrong scheme: the setting named, its password masked", async () => {
    for (const command of [
      ["config", "show"],
      ["start", "--port", "0"],
    ]) {
      const stderr = await refused(command, {
        DATABASE_URL: `mysql://imaging:${PASSWORD}@127.0.0.1:3306/imaging`,
      });
      assert.match(
        stderr,
        /DATABASE_URL from environment: a postgres:\/\/.*mysql:\/\/imaging:\*\*\*@127\.0\.0\.1/,
      );
    }
  });

  it("a PostgreSQL URL with a wrong password: refused, the password not repeated", async () => {
    const url = new URL(postgresAdminUrl);
    url.password = PASSWORD;
    const stderr = await refused(["start", "--port", "0"], {
      DATABASE_URL: url.toString(),
      REST_PORT: "0",
      MCP_ANALYSIS_PORT: "0",
      MCP_GATEKEEPER_PORT: "0",
      LOG_LEVEL: "silent",
    });
    assert.match(stderr, /password authentication failed/);
  });

  it("a secret of the wrong type in a config file: named with its type, its value hidden", async () => {
    const config = join(dir, "config.json");
    writeFileSync(config, JSON.stringify({ idp: "keycloak", keycloakAdminPassword: { value: PASSWORD } }));
    const stderr = await refused(["config", "show", "--config", config], {});
    assert.match(
      stderr,
      /keycloakAdminPassword from config file: .*\(got an object; a secret's value is not shown\)/,
    );
  });

  it("imaging config show prints no secret and no URL credentials", async () => {
    const result = await runCli(["config", "show", "--json"], {
      IMAGING_DATA_DIR: join(dir, "data"),
      DATABASE_URL: `postgres://imaging:${PASSWORD}@db.example.com:5432/imaging`,
      TOKEN_EXCHANGE_CLIENT_SECRET: PASSWORD,
      KEYCLOAK_URL: `http://admin:${PASSWORD}@kc.example.com/auth`,
      PUBLIC_URL: "http://gw.example.com:8090",
    });
    assert.equal(result.code, 0, result.stderr);
    assert.ok(!result.stdout.includes(PASSWORD), result.stdout);
    const shown = JSON.parse(result.stdout) as Record<string, string>;
    assert.equal(shown.databaseUrl, "postgres://imaging:***@db.example.com:5432/imaging");
    assert.equal(shown.tokenExchangeClientSecret, "****");
  });
});
