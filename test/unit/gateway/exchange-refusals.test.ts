import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { describe, it } from "node:test";
import Fastify from "fastify";
import { TokenExchangeRefusedError } from "../../../src/auth/token-exchange.ts";
import { exchangeRefusalLog } from "../../../src/gateway/exchange-refusals.ts";

/** The gateway's own logger (pino through Fastify), its lines collected. */
function collectingLogger() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split("\n").filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  const app = Fastify({ logger: { level: "info", stream } });
  return { log: app.log, lines };
}

const refusal = () =>
  new TokenExchangeRefusedError("invalid_request: Standard token exchange is not enabled", {
    error: "invalid_request",
    description: "Standard token exchange is not enabled for the requested client",
    status: 400,
  });
const party = (user: string) => ({
  client: "https://claude.ai/oauth/claude-code-client-metadata",
  username: user,
  subject: `sub-${user}`,
  issuer: "https://gw.example.com/auth/realms/imaging",
});

describe("refused token exchanges in the log", () => {
  it("one line per user and reason, and no more than the budget for many users", () => {
    const { log, lines } = collectingLogger();
    const record = exchangeRefusalLog({ maxPerInterval: 3 });
    for (let i = 0; i < 4; i++) record(log, party("alice"), refusal());
    assert.equal(lines.length, 1);
    assert.equal(lines[0]?.level, 40);
    assert.equal(lines[0]?.user, "alice");
    assert.match(
      String(lines[0]?.msg),
      /^token exchange refused by the identity provider for client https:\/\/claude\.ai\/oauth\/claude-code-client-metadata, user alice \(sub sub-alice\), issuer https:\/\/gw\.example\.com\/auth\/realms\/imaging: 400 invalid_request "Standard token exchange is not enabled for the requested client"; the client got 401/,
    );
    for (const user of ["bob", "carol", "dave", "erin"]) record(log, party(user), refusal());
    assert.deepEqual(
      lines.map((l) => l.user),
      ["alice", "bob", "carol"],
      "the budget of 3 lines stops the flood",
    );
  });
});
