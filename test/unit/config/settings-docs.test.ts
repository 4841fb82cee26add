import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { isSecretSetting, SETTINGS, settingList } from "../../../src/config/settings.ts";
import { renderSettingsTable, withSettingsTable } from "../../../src/config/settings-table.ts";

const administrators = readFileSync(new URL("../../../docs/administrators.md", import.meta.url), "utf8");

describe("settings declarations", () => {
  it("docs/administrators.md's configuration table is the one generated from them (else run `npm run docs:settings`)", () => {
    assert.equal(
      withSettingsTable(administrators),
      administrators,
      "docs/administrators.md's settings table is stale: run npm run docs:settings",
    );
  });

  it("give every setting a row naming its variable, file key, default and meaning", () => {
    const table = renderSettingsTable();
    assert.ok(
      table.includes("| `IMAGING_DATA_DIR` | `dataDir` | `./data` | SQLite store and generated secrets |"),
    );
    assert.ok(table.includes("| `REST_PORT` | `restPort` | `8070` |"));
    assert.ok(table.includes("| `DATABASE_URL` | `databaseUrl` | unset (SQLite file DATA_DIR/imaging.db) |"));
    assert.equal(table.split("\n").length, 2 + Object.keys(SETTINGS).length);
  });

  it("use one environment variable per setting and mark exactly the four secrets", () => {
    const envs = settingList.map((s) => s.env);
    assert.equal(new Set(envs).size, envs.length);
    assert.deepEqual(
      settingList.filter((s) => isSecretSetting(s.key)).map((s) => s.key),
      ["tokenExchangeClientSecret", "keycloakAdminPassword", "keycloakAdminClientSecret", "secretsKey"],
    );
  });
});
