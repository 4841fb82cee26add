import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createJwtVerifier, type JwtVerifier } from "../../src/auth/jwt-verifier.ts";
import { createMcpAccessVerifier } from "../../src/auth/mcp-access.ts";
import { tokenDigest } from "../../src/auth/token-exchange.ts";
import { startTestIssuer, type TestIssuer } from "../support/test-issuer.ts";

const RESOURCE = "http://127.0.0.1:8090/mcp";

describe("token verification against the issuer's JWKS", () => {
  let issuer: TestIssuer;
  before(async () => {
    issuer = await startTestIssuer();
  });
  after(async () => {
    await issuer?.close();
  });

  it("follows a key rotation with one refetch, and rate-limits refetches for unknown keys", async () => {
    const verifier = createJwtVerifier({ issuer: issuer.issuer, jwksCooldownMs: 300 });
    const first = await verifier.verify(await issuer.signMcp("alice", RESOURCE), RESOURCE);
    assert.equal(first.ok, true);
    const fetchesAfterFirst = issuer.jwksFetches;

    await issuer.rotate();
    await new Promise((r) => setTimeout(r, 350));
    const rotated = await issuer.sign(
      { sub: "alice", aud: RESOURCE, scope: "mcp:tools" },
      { kid: "test-key-2" },
    );
    assert.equal((await verifier.verify(rotated, RESOURCE)).ok, true, "the new key is fetched once");
    assert.equal(issuer.jwksFetches, fetchesAfterFirst + 1);

    for (let i = 0; i < 20; i++) {
      const bogus = await issuer.sign(
        { sub: "alice", aud: RESOURCE, scope: "mcp:tools" },
        { kid: `bogus-${i}` },
      );
      const result = await verifier.verify(bogus, RESOURCE);
      assert.equal(result.ok, false);
    }
    assert.ok(
      issuer.jwksFetches <= fetchesAfterFirst + 2,
      `at most one refetch per cooldown, saw ${issuer.jwksFetches}`,
    );
  });

  it("caches verified tokens: steady-state requests do no signature work", async () => {
    const real = createJwtVerifier({ issuer: issuer.issuer });
    let verifications = 0;
    const counting: JwtVerifier = {
      verify: (token, audience) => {
        verifications++;
        return real.verify(token, audience);
      },
    };
    const access = createMcpAccessVerifier(counting);
    const token = await issuer.signMcp("alice", RESOURCE);
    for (let i = 0; i < 10; i++) {
      const decision = await access.check(`Bearer ${token}`, RESOURCE);
      assert.equal(decision.ok, true);
      // The digest the exchange cache is keyed by: the token's own, hashed once per request.
      assert.equal(decision.ok && decision.digest, tokenDigest(token));
    }
    assert.equal(verifications, 1);
    const other = await access.check(`Bearer ${token}`, "http://127.0.0.1:8090/mcp/gatekeeper");
    assert.equal(other.ok, false, "a cached token still opens only its own resource");
    assert.equal(verifications, 2);
  });
});
