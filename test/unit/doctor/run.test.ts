import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { loadSettings } from "../../../src/config/load-config.ts";
import { type DoctorSources, probeBaseFrom, runDoctor } from "../../../src/doctor/run.ts";
import { storeCimdRepository } from "../../../src/idp/cimd/repository.ts";
import { openStore, type StoreHandle } from "../../../src/store/database.ts";
import { createTestStore, type TestStore } from "../../support/stores.ts";

describe("runDoctor on a Windows installation accessed over http (platform injected)", () => {
  let store: TestStore;
  let handle: StoreHandle;
  let sources: DoctorSources;
  before(async () => {
    store = await createTestStore("sqlite");
    handle = await openStore({ sqliteFile: store.sqliteFile });
    sources = {
      withCimd: (work) => work(storeCimdRepository(handle.db), []),
      exchangeSecret: async () => ({ reason: "not needed" }),
    };
  });
  after(async () => {
    await handle?.close();
    await store?.drop();
  });

  it("fails windows-public-url without PUBLIC_URL and still runs the checks that need no base_url", async () => {
    const settings = loadSettings({ env: {}, overrides: { dataDir: store.dataDir } });
    const report = await runDoctor({ settings, platform: "win32" }, sources);
    assert.equal(report.baseUrl, undefined);
    const [windows, ...rest] = report.checks;
    assert.equal(windows?.id, "windows-public-url");
    assert.equal(windows?.verdict, "fail");
    assert.match(windows?.fix ?? "", /PUBLIC_URL=http:\/\/<gateway-fqdn>:8090/);
    const byId = Object.fromEntries(rest.map((c) => [c.id, c]));
    assert.equal(byId.gateway?.verdict, "warn");
    assert.match(byId.gateway?.detail ?? "", /^not checked: base_url is unknown \(see windows-public-url\)$/);
    assert.equal(byId["cimd-clients"]?.verdict, "warn");
    assert.equal(byId["internal-bind"]?.verdict, "pass");
  });

  it("passes windows-public-url with PUBLIC_URL set", async () => {
    const settings = loadSettings({
      env: {},
      overrides: { dataDir: store.dataDir, publicUrl: "http://gw.example.com:8090" },
    });
    // Nothing listens there: only the first check matters here.
    const report = await runDoctor({ settings, platform: "win32", url: "http://127.0.0.1:9" }, sources);
    assert.equal(report.checks[0]?.verdict, "pass");
    assert.equal(report.baseUrl, "http://gw.example.com:8090");
    assert.equal(report.probed, "http://127.0.0.1:9");
  });
});

describe("probeBaseFrom: --url is a base_url", () => {
  it("keeps the origin and refuses paths, queries and other schemes", () => {
    assert.equal(probeBaseFrom("http://127.0.0.1:8282/"), "http://127.0.0.1:8282");
    assert.equal(probeBaseFrom("https://gw.example.com:443"), "https://gw.example.com");
    for (const bad of ["http://gw/mcp", "http://gw/?x=1", "ftp://gw", "gw.example.com:8090"])
      assert.equal(probeBaseFrom(bad), undefined, bad);
  });
});
