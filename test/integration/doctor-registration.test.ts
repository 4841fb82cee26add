import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Check } from "../../src/doctor/check.ts";
import { runCli } from "../support/cli.ts";
import { type IdpService, startIdpService } from "../support/idp-service.ts";
import { createTestStore, type TestStore } from "../support/stores.ts";

/** `imaging doctor`'s dynamic-client-registration check against a gateway with registration on. */
describe("imaging doctor: dynamic client registration (embedded identity provider)", () => {
  let store: TestStore;
  let idp: IdpService;
  const doctor = async (mode: string) => {
    const result = await runCli(["doctor", "--json"], {
      IMAGING_DATA_DIR: store.dataDir,
      PUBLIC_URL: idp.base,
      DATABASE_URL: "",
      IDP: "",
      IMAGING_CONFIG: "",
      TOKEN_EXCHANGE_CLIENT_SECRET: "",
      DYNAMIC_CLIENT_REGISTRATION: mode,
    });
    const checks = JSON.parse(result.stdout) as Check[];
    const check = checks.find((c) => c.id === "dynamic-client-registration");
    assert.ok(check, result.stdout);
    return { ...result, checks, check };
  };

  before(async () => {
    store = await createTestStore("sqlite");
    idp = await startIdpService(store, { overrides: { dynamicClientRegistration: "loopback" } });
  });
  after(async () => {
    await idp?.stop();
    await store?.drop();
  });

  it("passes, naming the mode and the advertised endpoint, when the gateway runs the same mode", async () => {
    const { check, checks } = await doctor("loopback");
    assert.equal(check.verdict, "pass", check.detail);
    assert.match(
      check.detail,
      new RegExp(`mode loopback: the issuer advertises registration_endpoint ${idp.issuer}/reg`),
    );
    assert.equal(
      checks.find((c) => c.id === "json-not-found")?.verdict,
      "pass",
      "/register is not probed for a 404",
    );
  });

  it("fails when the configuration says off but the issuer advertises registration", async () => {
    const { check, code } = await doctor("off");
    assert.equal(check.verdict, "fail");
    assert.match(check.detail, /mode off here, but the issuer advertises registration_endpoint/);
    assert.match(check.fix ?? "", /DYNAMIC_CLIENT_REGISTRATION/);
    assert.notEqual(code, 0);
  });
});
