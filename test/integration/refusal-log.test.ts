/**
 * A sign-in refused by a CIMD rule, or a registration refused by a registration rule, is logged at info
 * level with the client and the rule (the client itself often shows only "Incompatible auth server"),
 * once per client and rule a minute however often the client retries.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type CimdDocumentServer, startCimdDocumentServer } from "../support/cimd-document-server.ts";
import { type IdpService, seedUsers, startIdpService } from "../support/idp-service.ts";
import { startAuthorization } from "../support/oauth-flow.ts";
import { createTestStore, type TestStore } from "../support/stores.ts";

describe("refused sign-ins and registrations are logged at info, rate-limited", () => {
  let store: TestStore;
  let documents: CimdDocumentServer;
  let idp: IdpService;
  const lines: string[] = [];

  before(async () => {
    store = await createTestStore("sqlite");
    documents = await startCimdDocumentServer();
    idp = await startIdpService(store, {
      overrides: { dynamicClientRegistration: "loopback" },
      idp: {
        cimdCa: documents.ca,
        registration: { perAddress: 100 },
        log: (level, message) => lines.push(`${level} ${message}`),
      },
      seed: async (handle) => seedUsers(handle.db),
    });
  });
  after(async () => {
    await idp?.stop();
    await documents?.close();
    await store?.drop();
  });

  it("a client_id no CIMD policy accepts: one info line naming it and the rule, not one per attempt", async () => {
    const clientId = "https://unknown.example/client.json";
    const setup = {
      issuer: idp.issuer,
      clientId,
      redirectUri: "http://127.0.0.1:49152/callback",
      resource: idp.mcp,
    };
    const first = await startAuthorization(setup);
    assert.equal(first.status, 400);
    const rule = /\[rule ([a-z-]+)\]/.exec(first.html)?.[1];
    assert.ok(rule, first.html);
    for (let i = 0; i < 3; i++) assert.equal((await startAuthorization(setup)).status, 400);
    const logged = lines.filter((l) => l.includes(clientId));
    assert.equal(logged.length, 1, logged.join("\n"));
    assert.match(
      logged[0] as string,
      new RegExp(`^info sign-in refused: client ${clientId}, rule ${rule}: \\S`),
    );
  });

  it("a registration the loopback rule refuses: one info line naming the client and the rule", async () => {
    const register = () =>
      fetch(`${idp.issuer}/reg`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          client_name: "Remote Agent",
          redirect_uris: ["https://agent.example/callback"],
          token_endpoint_auth_method: "none",
        }),
      });
    for (let i = 0; i < 3; i++) {
      const response = await register();
      assert.equal(response.status, 400);
      await response.body?.cancel();
    }
    const logged = lines.filter((l) => l.includes('"Remote Agent"'));
    assert.equal(logged.length, 1, lines.join("\n"));
    assert.match(
      logged[0] as string,
      /^info registration refused: client "Remote Agent" from \S+, rule [a-z-]+: \S/,
    );
  });
});
