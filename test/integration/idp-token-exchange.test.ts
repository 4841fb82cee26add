import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { generateKeyPair, importJWK, type JWK, SignJWT } from "jose";
import { grantUser, setUserDisabled } from "../../src/domain/users.ts";
import { loadDemo } from "../../src/scanner/demo/load-demo.ts";
import { type CimdDocumentServer, startCimdDocumentServer } from "../support/cimd-document-server.ts";
import {
  type IdpService,
  seedCimdClient,
  seedUsers,
  startIdpService,
  USERS,
} from "../support/idp-service.ts";
import { authorize, type ClientSetup, decodeJwt, exchangeToken } from "../support/oauth-flow.ts";
import { storedSecret } from "../support/stored-secrets.ts";
import { createTestStore, type TestStore } from "../support/stores.ts";

describe("embedded identity provider: RFC 8693 token exchange", () => {
  let store: TestStore;
  let documents: CimdDocumentServer;
  let idp: IdpService;
  let setup: ClientSetup;
  let exchangeClient: { clientId: string; clientSecret: string };
  let alice: string;
  let bob: string;

  before(async () => {
    store = await createTestStore("sqlite");
    documents = await startCimdDocumentServer();
    idp = await startIdpService(store, {
      idp: { cimdCa: documents.ca },
      seed: async (handle) => {
        await loadDemo(handle.db);
        await seedUsers(handle.db);
        await seedCimdClient(handle.db, "test-ai-client", documents.clientId);
      },
    });
    setup = {
      issuer: idp.issuer,
      clientId: documents.clientId,
      redirectUri: "http://127.0.0.1:49152/callback",
      resource: idp.mcp,
    };
    exchangeClient = {
      clientId: "mcp-token-exchange",
      // Generated once into the store; the gateway's exchanger reads the same secret.
      clientSecret: await storedSecret(store, "mcp-token-exchange"),
    };
    alice = (await authorize(setup, { username: "alice", password: USERS.alice.password })).accessToken;
    bob = (await authorize(setup, { username: "bob", password: USERS.bob.password })).accessToken;
  });
  after(async () => {
    await idp?.stop();
    await documents?.close();
    await store?.drop();
  });

  it("exchanges an MCP access token for a platform token with the user's roles and applications", async () => {
    const { status, body } = await exchangeToken(idp.issuer, exchangeClient, { subject_token: alice });
    assert.equal(status, 200, JSON.stringify(body));
    assert.equal(body.issued_token_type, "urn:ietf:params:oauth:token-type:access_token");
    assert.equal(body.token_type, "Bearer");
    const subject = decodeJwt(alice).payload;
    const { header, payload } = decodeJwt(String(body.access_token));
    assert.equal(header.typ, "at+jwt");
    assert.equal(payload.aud, "imaging-api");
    assert.equal(payload.iss, idp.issuer);
    assert.equal(payload.sub, subject.sub);
    assert.deepEqual(payload.roles, ["admin"]);
    assert.deepEqual(payload.applications, []);
    assert.ok(typeof body.expires_in === "number" && body.expires_in > 0);
    assert.ok((payload.exp as number) <= (subject.exp as number), "never outlives the subject token");
    assert.ok((body.expires_in as number) <= (subject.exp as number) - Math.floor(Date.now() / 1000) + 1);
  });

  it("the platform token is accepted by the REST API with the user's rights", async () => {
    const { body } = await exchangeToken(idp.issuer, exchangeClient, { subject_token: bob });
    const response = await fetch(`${idp.base}/rest/applications?limit=10`, {
      headers: { authorization: `Bearer ${body.access_token}` },
    });
    assert.equal(response.status, 200);
    const listed = JSON.stringify(await response.json());
    assert.match(listed, /storefront-web/);
    assert.doesNotMatch(listed, /payments-service/);
  });

  it("reads the rights from the store at exchange time", async () => {
    await grantUser(idp.service.store.db, "bob", {
      role: "viewer",
      applications: ["claims-portal", "storefront-web"],
    });
    const { body } = await exchangeToken(idp.issuer, exchangeClient, { subject_token: bob });
    assert.deepEqual(decodeJwt(String(body.access_token)).payload.applications, [
      "claims-portal",
      "storefront-web",
    ]);
  });

  describe("refusals", () => {
    it("a wrong client secret: 401 invalid_client", async () => {
      const { status, body } = await exchangeToken(
        idp.issuer,
        { ...exchangeClient, clientSecret: "not-the-secret" },
        { subject_token: alice },
      );
      assert.equal(status, 401);
      assert.equal(body.error, "invalid_client");
    });

    it("another client (the AI client itself) may not use the grant", async () => {
      const { status, body } = await exchangeToken(idp.issuer, undefined, {
        client_id: documents.clientId,
        subject_token: alice,
      });
      assert.equal(status, 400);
      assert.match(String(body.error), /invalid_request|unauthorized_client/);
      assert.match(String(body.error_description), /not allowed for this client/);
    });

    it("a token signed by someone else, even with our issuer and audience", async () => {
      const { privateKey } = await generateKeyPair("RS256");
      const foreign = await new SignJWT({ scope: "mcp:tools", client_id: documents.clientId })
        .setProtectedHeader({ alg: "RS256", typ: "at+jwt", kid: decodeJwt(alice).header.kid as string })
        .setIssuer(idp.issuer)
        .setAudience([idp.mcp, "mcp-token-exchange"])
        .setSubject(String(decodeJwt(alice).payload.sub))
        .setIssuedAt()
        .setExpirationTime("5m")
        .sign(privateKey);
      const { status, body } = await exchangeToken(idp.issuer, exchangeClient, { subject_token: foreign });
      assert.equal(status, 400);
      assert.equal(body.error, "invalid_grant");
      assert.match(String(body.error_description), /not signed by this identity provider/);
    });

    it("a token of ours without mcp-token-exchange in its audience (e.g. a platform token)", async () => {
      const platform = await exchangeToken(idp.issuer, exchangeClient, { subject_token: alice });
      const { status, body } = await exchangeToken(idp.issuer, exchangeClient, {
        subject_token: String(platform.body.access_token),
      });
      assert.equal(status, 400);
      assert.equal(body.error, "invalid_grant");
      assert.match(String(body.error_description), /audience does not include mcp-token-exchange/);
    });

    const signWithOurKey = async (
      claims: Record<string, unknown>,
      expiresAt: number,
      issuer = idp.issuer,
    ) => {
      const file = JSON.parse(await storedSecret(store, "idp-signing-keys")) as {
        keys: { status: string; jwk: JWK }[];
      };
      const current = file.keys.find((k) => k.status === "current") as { jwk: JWK };
      return new SignJWT(claims)
        .setProtectedHeader({ alg: "RS256", typ: "at+jwt", kid: current.jwk.kid as string })
        .setIssuer(issuer)
        .setAudience([idp.mcp, "mcp-token-exchange"])
        .setSubject(String(decodeJwt(alice).payload.sub))
        .setIssuedAt(expiresAt - 600)
        .setExpirationTime(expiresAt)
        .sign(await importJWK(current.jwk, "RS256"));
    };

    it("an expired token", async () => {
      const expired = await signWithOurKey({ scope: "mcp:tools" }, Math.floor(Date.now() / 1000) - 120);
      const { status, body } = await exchangeToken(idp.issuer, exchangeClient, { subject_token: expired });
      assert.equal(status, 400);
      assert.match(String(body.error_description), /expired/);
    });

    it("a token naming another issuer", async () => {
      const other = await signWithOurKey(
        {},
        Math.floor(Date.now() / 1000) + 300,
        "https://elsewhere.example/realm",
      );
      const { body } = await exchangeToken(idp.issuer, exchangeClient, { subject_token: other });
      assert.equal(body.error, "invalid_grant");
      assert.match(String(body.error_description), /not issued by this identity provider/);
    });

    it("another audience than imaging-api", async () => {
      const { status, body } = await exchangeToken(idp.issuer, exchangeClient, {
        subject_token: alice,
        audience: "https://other.example/api",
      });
      assert.equal(status, 400);
      assert.equal(body.error, "invalid_target");
    });

    it("a wrong subject_token_type", async () => {
      const { status, body } = await exchangeToken(idp.issuer, exchangeClient, {
        subject_token: alice,
        subject_token_type: "urn:ietf:params:oauth:token-type:id_token",
      });
      assert.equal(status, 400);
      assert.equal(body.error, "invalid_request");
    });

    it("a disabled user: refused, and the gateway answers 401 with a Bearer challenge", async () => {
      await setUserDisabled(idp.service.store.db, "bob", true);
      const { status, body } = await exchangeToken(idp.issuer, exchangeClient, { subject_token: bob });
      assert.equal(status, 400);
      assert.match(String(body.error_description), /disabled/);
      const response = await fetch(idp.mcp, {
        method: "POST",
        headers: {
          authorization: `Bearer ${bob}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
      });
      assert.equal(response.status, 401);
      assert.match(response.headers.get("www-authenticate") ?? "", /token exchange refused/);
    });
  });
});
