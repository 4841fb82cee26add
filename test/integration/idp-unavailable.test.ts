import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import pg from "pg";
import { type IdpService, startIdpService } from "../support/idp-service.ts";
import { createTestStore, dropDatabase, postgresAdminUrl, type TestStore } from "../support/stores.ts";

/**
 * The embedded identity provider when its store fails (issue 17, point 2): its routes answer a
 * retryable 503 JSON error naming nothing internal, and the cause is logged once, not per request.
 * The PostgreSQL database really goes away under the running service.
 */
describe("the embedded identity provider with its store gone", () => {
  let store: TestStore;
  let idp: IdpService;
  const logged: { level: string; message: string }[] = [];

  before(async () => {
    store = await createTestStore("postgres");
    idp = await startIdpService(store, {
      idp: { log: (level, message) => logged.push({ level, message }) },
    });
  });
  after(async () => {
    await idp?.stop().catch(() => undefined);
    await store?.drop();
  });

  it("answers 503 with Retry-After and an OAuth error, and logs the cause once", async () => {
    const { token_endpoint } = (await (
      await fetch(`${idp.issuer}/.well-known/openid-configuration`)
    ).json()) as { token_endpoint: string };
    // A CIMD client's code redemption: the provider reads the client policies from the store first.
    const redeem = () =>
      fetch(token_endpoint, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          grant_type: "authorization_code",
          client_id: "https://ai-client.example.org/oauth/client-metadata.json",
          code: "x".repeat(43),
          redirect_uri: "http://127.0.0.1:33418/callback",
          code_verifier: "v".repeat(43),
        }),
      });
    const before = await redeem();
    assert.equal(before.status, 400, "with its store the provider refuses the client (no CIMD policy)");
    const expired = await fetch(`${idp.issuer}/interaction/no-such-interaction`);
    assert.equal(expired.status, 400, "a sign-in step without its session stays a 400, not a 503");

    const database = new URL(store.databaseUrl as string).pathname.slice(1);
    const admin = new pg.Client({ connectionString: postgresAdminUrl });
    await admin.connect();
    try {
      await dropDatabase(admin, database);
    } finally {
      await admin.end();
    }

    for (let i = 0; i < 3; i++) {
      const response = await redeem();
      const text = await response.text();
      assert.equal(response.status, 503, text);
      assert.equal(response.headers.get("retry-after"), "5");
      assert.match(response.headers.get("content-type") ?? "", /^application\/json/);
      assert.equal((JSON.parse(text) as { error: string }).error, "temporarily_unavailable");
      assert.doesNotMatch(text, new RegExp(`${database}|127\\.0\\.0\\.1|5432|postgres`, "i"));
    }
    // Discovery needs no store: it keeps answering.
    assert.equal((await fetch(`${idp.issuer}/.well-known/openid-configuration`)).status, 200);
    const errors = logged.filter((l) => l.level === "error");
    assert.equal(errors.length, 1, JSON.stringify(logged));
    assert.match(
      errors[0]?.message ?? "",
      /^identity provider cannot serve requests: .+ \(answering 503 until it can\)$/,
    );
  });
});
