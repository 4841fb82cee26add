import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type CallToolResult, Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { loadDemo } from "../../src/scanner/demo/load-demo.ts";
import { CookieJar, follow, formsOf, postForm } from "../support/browserless-session.ts";
import { type CimdDocumentServer, startCimdDocumentServer } from "../support/cimd-document-server.ts";
import {
  type IdpService,
  seedCimdClient,
  seedUsers,
  startIdpService,
  USERS,
} from "../support/idp-service.ts";
import { authorize, type ClientSetup, decodeJwt, refresh } from "../support/oauth-flow.ts";
import { createTestStore, STORE_KINDS, type TestStore } from "../support/stores.ts";

const MCP_SCOPES = "mcp:tools mcp:resources mcp:prompts";

for (const kind of STORE_KINDS) {
  describe(`embedded identity provider: authorization code + PKCE for a CIMD client (${kind})`, () => {
    let store: TestStore;
    let documents: CimdDocumentServer;
    let idp: IdpService;
    let setup: ClientSetup;
    let port: number;

    const start = async (seed = false) => {
      idp = await startIdpService(store, {
        port,
        idp: { cimdCa: documents.ca },
        ...(seed
          ? {
              seed: async (handle) => {
                await loadDemo(handle.db);
                await seedUsers(handle.db);
                await seedCimdClient(handle.db, "test-ai-client", documents.clientId);
              },
            }
          : {}),
      });
    };

    before(async () => {
      store = await createTestStore(kind);
      documents = await startCimdDocumentServer();
      const { freePort } = await import("../support/service.ts");
      port = await freePort();
      await start(true);
      setup = {
        issuer: idp.issuer,
        clientId: documents.clientId,
        redirectUri: "http://127.0.0.1:49152/callback",
        resource: idp.mcp,
      };
    });
    after(async () => {
      await idp?.stop();
      await documents?.close();
      await store?.drop();
    });

    const connect = async (url: string, token: string) => {
      const client = new Client({ name: "idp-test", version: "1.0.0" });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(url), {
          requestInit: { headers: { authorization: `Bearer ${token}` } },
        }),
      );
      return client;
    };
    const applicationsOf = (result: CallToolResult) =>
      (result.structuredContent as { applications: { name: string }[] }).applications.map((a) => a.name);

    let first: Awaited<ReturnType<typeof authorize>>;

    it("signs the user in, asks consent showing the client's name and redirect host, and redirects with code and iss", async () => {
      first = await authorize(setup, { username: "alice", password: USERS.alice.password });
      assert.match(first.consentHtml, /Test AI Client/);
      assert.match(first.consentHtml, /127\.0\.0\.1:49152/);
      assert.match(first.consentHtml, /id="approve"/);
      assert.equal(first.callback.searchParams.get("iss"), idp.issuer);
      assert.equal(first.callback.origin, "http://127.0.0.1:49152");
    });

    it("issues a JWT access token for the MCP resource: audience [resource, mcp-token-exchange], mcp:* scope, no platform roles", () => {
      const { header, payload } = decodeJwt(first.accessToken);
      assert.equal(header.typ, "at+jwt");
      assert.equal(header.alg, "RS256");
      assert.deepEqual(payload.aud, [idp.mcp, "mcp-token-exchange"]);
      assert.equal(payload.iss, idp.issuer);
      assert.equal(payload.client_id, documents.clientId);
      assert.deepEqual(String(payload.scope).split(" ").sort(), MCP_SCOPES.split(" ").sort());
      assert.equal(payload.roles, undefined);
      assert.equal(payload.applications, undefined);
      assert.equal(typeof payload.sub, "string");
      assert.ok(first.refreshToken, "a refresh token is issued to the public client");
      assert.equal(first.response.token_type.toLowerCase(), "bearer");
    });

    it("grants a request without scope the MCP resource's default scopes (RFC 6749 section 3.3)", async () => {
      const omitted = await authorize(
        { ...setup, scope: null },
        { username: "bob", password: USERS.bob.password },
      );
      for (const scope of MCP_SCOPES.split(" ")) assert.match(omitted.consentHtml, new RegExp(scope));
      const { payload } = decodeJwt(omitted.accessToken);
      assert.deepEqual(String(payload.scope).split(" ").sort(), MCP_SCOPES.split(" ").sort());
      assert.deepEqual(payload.aud, [idp.mcp, "mcp-token-exchange"]);
      const client = await connect(idp.mcp, omitted.accessToken);
      try {
        const result = (await client.callTool({ name: "applications", arguments: {} })) as CallToolResult;
        assert.deepEqual(applicationsOf(result), ["storefront-web"]);
      } finally {
        await client.close();
      }
    });

    it("is accepted by the gateway on /mcp, which exchanges it: tools answer with the user's rights", async () => {
      const client = await connect(idp.mcp, first.accessToken);
      try {
        const result = (await client.callTool({ name: "applications", arguments: {} })) as CallToolResult;
        assert.deepEqual(applicationsOf(result), ["claims-portal", "payments-service", "storefront-web"]);
      } finally {
        await client.close();
      }
    });

    it("gives a viewer only the applications granted to them", async () => {
      const bob = await authorize(setup, { username: "bob", password: USERS.bob.password });
      const client = await connect(idp.mcp, bob.accessToken);
      try {
        const result = (await client.callTool({ name: "applications", arguments: {} })) as CallToolResult;
        assert.deepEqual(applicationsOf(result), ["storefront-web"]);
      } finally {
        await client.close();
      }
    });

    it("issues gatekeeper tokens for the gatekeeper resource, refused on /mcp", async () => {
      const gk = await authorize(
        { ...setup, resource: idp.gatekeeper },
        { username: "alice", password: USERS.alice.password },
      );
      assert.deepEqual(decodeJwt(gk.accessToken).payload.aud, [idp.gatekeeper, "mcp-token-exchange"]);
      const client = await connect(idp.gatekeeper, gk.accessToken);
      await client.close();
      const onAnalysis = await fetch(idp.mcp, {
        method: "POST",
        headers: {
          authorization: `Bearer ${gk.accessToken}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
      });
      assert.equal(onAnalysis.status, 401);
    });

    it("a refresh refused for a resource its grant does not cover (invalid_target) leaves the refresh token as it was", async () => {
      const signedIn = await authorize(setup, { username: "alice", password: USERS.alice.password });
      const token = signedIn.refreshToken as string;
      // The gatekeeper is an MCP resource of this issuer, but not the one this grant was given for.
      for (const resource of [idp.gatekeeper, "https://evil.example/mcp"]) {
        await assert.rejects(refresh({ ...setup, resource }, token), (error: { error?: string }) => {
          assert.equal(error.error, "invalid_target", resource);
          return true;
        });
      }
      const next = await refresh(setup, token);
      assert.ok(next.refreshToken, "the refused requests spent nothing");
      assert.deepEqual(decodeJwt(next.accessToken).payload.aud, [idp.mcp, "mcp-token-exchange"]);
      assert.ok((await refresh(setup, next.refreshToken as string)).accessToken, "nor revoked the grant");
    });

    let rotated: string;

    it("rotates the refresh token of the public client at each use; the used one is refused", async () => {
      const next = await refresh(setup, first.refreshToken as string);
      assert.ok(next.refreshToken);
      assert.notEqual(next.refreshToken, first.refreshToken);
      assert.deepEqual(decodeJwt(next.accessToken).payload.aud, [idp.mcp, "mcp-token-exchange"]);
      rotated = next.refreshToken as string;
      await assert.rejects(refresh(setup, first.refreshToken as string), (error: { error?: string }) => {
        assert.equal(error.error, "invalid_grant");
        return true;
      });
    });

    it("keeps sessions, grants and refresh tokens across a restart (store-backed)", async () => {
      // Reuse of a rotated token revokes the grant (RFC 9700): sign in again for a fresh chain.
      const again = await authorize(setup, { username: "alice", password: USERS.alice.password });
      assert.ok(rotated);
      // The provider's stored payloads per model, read from the table its adapter writes.
      const rows = await idp.service.store.db
        .selectFrom("oidc_payloads")
        .select(["model", (eb) => eb.fn.countAll<number>().as("count")])
        .groupBy("model")
        .execute();
      const counts: Record<string, number> = Object.fromEntries(rows.map((r) => [r.model, Number(r.count)]));
      assert.ok((counts.Session ?? 0) >= 1 && (counts.Grant ?? 0) >= 1 && (counts.RefreshToken ?? 0) >= 1);
      await idp.stop();
      await start();
      const next = await refresh(setup, again.refreshToken as string);
      assert.ok(next.accessToken);
      // The browser session survived too: a new authorization goes straight to consent.
      const jar = again.jar;
      const { response } = await follow(
        jar,
        `${idp.issuer}/auth?${new URLSearchParams({
          client_id: setup.clientId,
          redirect_uri: setup.redirectUri,
          response_type: "code",
          scope: MCP_SCOPES,
          resource: setup.resource,
          code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
          code_challenge_method: "S256",
        })}`,
        setup.redirectUri,
      );
      const html = await response.text();
      assert.match(html, /id="approve"/, "the signed-in session skips the sign-in page");
    });

    it("signs out (end_session): the session ends and the next authorization asks to sign in again", async () => {
      const jar = new CookieJar();
      await authorize(setup, { username: "alice", password: USERS.alice.password }, jar);
      const confirm = await jar.fetch(`${idp.issuer}/session/end`);
      assert.equal(confirm.status, 200);
      const page = await confirm.text();
      assert.match(page, /id="sign-out"/);
      const [form] = formsOf(page, `${idp.issuer}/session/end`);
      assert.ok(form);
      const done = await postForm(jar, form, { logout: "yes" });
      const { response } = await follow(
        jar,
        new URL(done.headers.get("location") as string, form.action).href,
        setup.redirectUri,
      );
      assert.match(await response.text(), /You are signed out/);
      const { response: again } = await follow(
        jar,
        `${idp.issuer}/auth?${new URLSearchParams({
          client_id: setup.clientId,
          redirect_uri: setup.redirectUri,
          response_type: "code",
          scope: MCP_SCOPES,
          resource: setup.resource,
          code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
          code_challenge_method: "S256",
        })}`,
        setup.redirectUri,
      );
      assert.match(await again.text(), /name="password"/);
    });
  });
}
