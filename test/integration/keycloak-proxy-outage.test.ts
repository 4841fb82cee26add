import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import Fastify, { type FastifyInstance } from "fastify";
import { keycloakProxy } from "../../src/gateway/keycloak-proxy.ts";
import { freePort } from "../support/service.ts";

/** The gateway's Keycloak route with nothing listening at KEYCLOAK_URL (Keycloak down), over real HTTP. */
describe("gateway: Keycloak down", () => {
  let app: FastifyInstance;
  let base: string;
  const lines: { level: number; msg: string; upstream?: string; err?: { stack?: string } }[] = [];

  before(async () => {
    const dead = await freePort();
    app = Fastify({
      logger: { level: "info", stream: { write: (line: string) => void lines.push(JSON.parse(line)) } },
    });
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    await app.register(keycloakProxy({ baseUrl: base, keycloakUrl: `http://127.0.0.1:${dead}/auth` }));
    await app.listen({ host: "127.0.0.1", port });
  });
  after(async () => {
    await app?.close();
  });

  it("answers 503 JSON with Retry-After, naming no address, and logs the outage once, not per request", async () => {
    const responses = await Promise.all(
      Array.from({ length: 100 }, () =>
        fetch(`${base}/auth/realms/imaging/.well-known/openid-configuration`),
      ),
    );
    for (const response of responses) {
      assert.equal(response.status, 503);
      assert.equal(response.headers.get("retry-after"), "5");
      assert.deepEqual(await response.json(), {
        error: "temporarily_unavailable",
        error_description: "The identity provider is not reachable right now; try again in a few seconds.",
      });
    }
    const warnings = lines.filter((line) => line.level >= 40);
    assert.equal(warnings.length, 1, JSON.stringify(warnings.map((w) => w.msg)));
    assert.match(warnings[0]?.msg ?? "", /^Keycloak \(KEYCLOAK_URL .*\) does not answer: .*ECONNREFUSED/);
  });
});
