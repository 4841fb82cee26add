import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import Fastify, { type FastifyInstance } from "fastify";
import { MCP_SCOPES } from "../../src/contracts/platform.ts";
import { keycloakProxy } from "../../src/gateway/keycloak-proxy.ts";
import { createRegistrationGate } from "../../src/idp/registration/gate.ts";
import { freePort } from "../support/service.ts";

/**
 * The gateway's registration policy in front of Keycloak, with its log: a client's bad registration is
 * answered by the gateway (Keycloak, here not even listening, never sees it) and logs nothing at error
 * level. The whole path with a real Keycloak is test/e2e/keycloak-registration.test.ts.
 */
describe("gateway: registrations refused in front of Keycloak", () => {
  let app: FastifyInstance;
  let endpoint: string;
  const lines: { level: number; msg: string }[] = [];

  before(async () => {
    const keycloakPort = await freePort();
    app = Fastify({
      logger: { level: "info", stream: { write: (line: string) => void lines.push(JSON.parse(line)) } },
    });
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    await app.register(
      keycloakProxy({
        baseUrl: base,
        keycloakUrl: `http://127.0.0.1:${keycloakPort}/auth`,
        registrationGate: createRegistrationGate({
          policy: { mode: "loopback", trustedHosts: [], mcpScopes: MCP_SCOPES },
          perAddress: 100,
        }),
      }),
    );
    await app.listen({ host: "127.0.0.1", port });
    endpoint = `${base}/auth/realms/imaging/clients-registrations/openid-connect`;
  });
  after(async () => {
    await app?.close();
  });

  const post = async (body: string) => {
    const response = await fetch(endpoint, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    return { status: response.status, body: (await response.json()) as Record<string, string> };
  };

  it("answers 10 KB of 5,000 nested arrays with 400 invalid_client_metadata, and an open redirect with 400", async () => {
    const nested = await post(
      `{"redirect_uris":["http://localhost:3334/cb"],"contacts":${"[".repeat(5000)}${"]".repeat(5000)}}`,
    );
    assert.equal(nested.status, 400, JSON.stringify(nested.body));
    assert.equal(nested.body.error, "invalid_client_metadata");
    assert.match(nested.body.error_description ?? "", /\[rule metadata-too-deep\]/);
    const postLogout = await post(
      JSON.stringify({
        redirect_uris: ["http://localhost:3334/cb"],
        post_logout_redirect_uris: ["https://evil.example/phish"],
      }),
    );
    assert.equal(postLogout.status, 400);
    assert.equal(postLogout.body.error, "invalid_redirect_uri");
  });

  it("logged nothing at error level for those clients' bad input", () => {
    assert.deepEqual(
      lines.filter((line) => line.level >= 50).map((line) => line.msg),
      [],
    );
  });
});
