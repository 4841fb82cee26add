import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { decodeJwt } from "jose";
import { issuerMetadata } from "../../src/auth/issuer-metadata.ts";
import {
  createTokenExchanger,
  TokenExchangeRefusedError,
  type TokenExchanger,
  TokenExchangeUnavailableError,
  tokenDigest,
} from "../../src/auth/token-exchange.ts";
import { startTestIssuer, type TestIssuer } from "../support/test-issuer.ts";

const RESOURCE = "http://127.0.0.1:8090/mcp";

describe("token exchange client (RFC 8693, as mcp-token-exchange)", () => {
  let issuer: TestIssuer;
  let exchanger: TokenExchanger;
  const inFiveMinutes = () => Date.now() + 300_000;

  before(async () => {
    issuer = await startTestIssuer();
    issuer.setUser("alice", { roles: ["admin"], applications: [] });
    issuer.setUser("bob", { roles: ["viewer"], applications: ["storefront-web"] });
    exchanger = createTokenExchanger({
      metadata: issuerMetadata(issuer.issuer),
      clientId: "mcp-token-exchange",
      clientSecret: issuer.clientSecret,
      audience: "imaging-api",
    });
  });
  after(async () => {
    await issuer?.close();
  });

  it("obtains a platform token carrying the user's roles and applications", async () => {
    const { accessToken } = await exchanger.exchange(await issuer.signMcp("bob", RESOURCE), inFiveMinutes());
    const claims = decodeJwt(accessToken);
    assert.equal(claims.aud, "imaging-api");
    assert.equal(claims.sub, "bob");
    assert.deepEqual(claims.roles, ["viewer"]);
    assert.deepEqual(claims.applications, ["storefront-web"]);
  });

  it("caches the result per subject token", async () => {
    const token = await issuer.signMcp("alice", RESOURCE);
    const before = issuer.exchanges;
    const first = await exchanger.exchange(token, inFiveMinutes());
    const second = await exchanger.exchange(token, inFiveMinutes());
    assert.equal(second.accessToken, first.accessToken);
    assert.equal(issuer.exchanges, before + 1);
  });

  it("finds the same cached result under the digest the caller computed (the MCP access check's)", async () => {
    const token = await issuer.signMcp("alice", RESOURCE);
    const other = await issuer.signMcp("bob", RESOURCE);
    const before = issuer.exchanges;
    const first = await exchanger.exchange(token, inFiveMinutes());
    const second = await exchanger.exchange(token, inFiveMinutes(), tokenDigest(token));
    assert.equal(second.accessToken, first.accessToken);
    assert.equal(issuer.exchanges, before + 1);
    const bobs = await exchanger.exchange(other, inFiveMinutes(), tokenDigest(other));
    assert.equal(decodeJwt(bobs.accessToken).sub, "bob");
    assert.equal(issuer.exchanges, before + 2);
  });

  it("never keeps a result past the subject token's expiry", async () => {
    const token = await issuer.signMcp("alice", RESOURCE);
    const subjectExpiresAt = Date.now() + 5_300; // 5 s margin: cached for about 0.3 s
    const first = await exchanger.exchange(token, subjectExpiresAt);
    assert.ok(first.expiresAt <= subjectExpiresAt);
    await new Promise((r) => setTimeout(r, 600));
    const before = issuer.exchanges;
    await exchanger.exchange(token, subjectExpiresAt);
    assert.equal(issuer.exchanges, before + 1);
  });

  it("shares one exchange among concurrent requests with the same token", async () => {
    const token = await issuer.signMcp("alice", RESOURCE);
    const before = issuer.exchanges;
    issuer.exchangeDelayMs = 200;
    try {
      const results = await Promise.all(
        Array.from({ length: 8 }, () => exchanger.exchange(token, inFiveMinutes())),
      );
      assert.equal(new Set(results.map((r) => r.accessToken)).size, 1);
      assert.equal(issuer.exchanges, before + 1);
    } finally {
      issuer.exchangeDelayMs = 0;
    }
  });

  it("reports a refusal as such (unknown user)", async () => {
    await assert.rejects(
      exchanger.exchange(await issuer.signMcp("mallory", RESOURCE), inFiveMinutes()),
      (error: Error) => error instanceof TokenExchangeRefusedError && /invalid_grant/.test(error.message),
    );
  });

  it("reports a wrong client secret as a refusal", async () => {
    const wrong = createTokenExchanger({
      metadata: issuerMetadata(issuer.issuer),
      clientId: "mcp-token-exchange",
      clientSecret: "not-the-secret",
      audience: "imaging-api",
    });
    await assert.rejects(
      wrong.exchange(await issuer.signMcp("alice", RESOURCE), inFiveMinutes()),
      TokenExchangeRefusedError,
    );
  });

  it("keeps serving cached exchanges when the identity provider is down, and says so for new ones", async () => {
    const cachedToken = await issuer.signMcp("alice", RESOURCE);
    const cached = await exchanger.exchange(cachedToken, inFiveMinutes());
    const fresh = await issuer.signMcp("alice", RESOURCE, { expiresIn: "4m" });
    await issuer.stop();
    assert.equal((await exchanger.exchange(cachedToken, inFiveMinutes())).accessToken, cached.accessToken);
    await assert.rejects(exchanger.exchange(fresh, inFiveMinutes()), TokenExchangeUnavailableError);
  });
});
