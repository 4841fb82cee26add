import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, beforeEach, describe, it } from "node:test";
import type { CimdPolicy, CimdProfile } from "../../src/idp/cimd/model.ts";
import { loadDemo } from "../../src/scanner/demo/load-demo.ts";
import { updateCimdClient } from "../../src/store/cimd.ts";
import { type CimdDocumentServer, startCimdDocumentServer } from "../support/cimd-document-server.ts";
import {
  type IdpService,
  seedCimdClient,
  seedUsers,
  startIdpService,
  USERS,
} from "../support/idp-service.ts";
import { authorize, decodeJwt, startAuthorization } from "../support/oauth-flow.ts";
import { createTestStore, type TestStore } from "../support/stores.ts";

/**
 * The specification's per-client CIMD configuration, exercised through the real provider: the HTTPS
 * variant, the HTTP variant (driven with oauth4webapi), and each mistake of its Errors table.
 */
describe("CIMD client policies enforced by the embedded identity provider", () => {
  let store: TestStore;
  let https: CimdDocumentServer;
  let plain: { server: Server; clientId: string };
  let idp: IdpService;
  const redirectUri = "http://127.0.0.1:41999/callback";
  const db = () => idp.service.store.db;

  const profile = (name: string, overrides: Partial<CimdProfile> = {}): CimdProfile => ({
    name: `cimd-profile-${name}`,
    executor: "client-id-metadata-document",
    allowHttpScheme: false,
    restrictSameDomain: false,
    onlyAllowConfidentialClient: false,
    trustedDomains: ["127.0.0.1", "localhost"],
    ...overrides,
  });
  const policy = (name: string, overrides: Partial<CimdPolicy> = {}): CimdPolicy => ({
    name: `cimd-policy-${name}`,
    condition: "client-id-uri",
    uriSchemes: ["https"],
    trustedDomains: ["127.0.0.1"],
    profiles: [`cimd-profile-${name}`],
    enabled: true,
    ...overrides,
  });
  /** Writes a client's profile and/or policy whole, as `imaging cimd set` and the REST change do. */
  const save = (client: string, next: { profile?: CimdProfile; policy?: CimdPolicy }) =>
    updateCimdClient(db(), client, () => next);
  const attempt = (clientId: string) =>
    startAuthorization({ issuer: idp.issuer, clientId, redirectUri, resource: idp.mcp });

  async function refused(clientId: string, rule: RegExp) {
    const started = await attempt(clientId);
    assert.equal(started.status, 400, `refused with 400, got ${started.status}`);
    assert.match(started.html, rule);
    assert.doesNotMatch(started.pageUrl, /interaction/, "no sign-in page for a refused client");
  }

  before(async () => {
    https = await startCimdDocumentServer("/oauth/client-metadata.json", ["http://127.0.0.1/callback"]);
    const server = createServer((req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          client_id: plain.clientId,
          client_name: "Plain HTTP Dev Client",
          redirect_uris: ["http://127.0.0.1/callback"],
          token_endpoint_auth_method: "none",
        }),
      );
      void req;
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    plain = {
      server,
      clientId: `http://127.0.0.1:${(server.address() as AddressInfo).port}/oauth/client.json`,
    };
    store = await createTestStore("sqlite");
    idp = await startIdpService(store, {
      idp: { cimdCa: https.ca },
      seed: async (handle) => {
        await loadDemo(handle.db);
        await seedUsers(handle.db);
        await seedCimdClient(handle.db, "https-client", https.clientId);
        await seedCimdClient(handle.db, "plain", plain.clientId);
      },
    });
  });
  beforeEach(async () => {
    await save("https-client", { profile: profile("https-client"), policy: policy("https-client") });
    // The plain client's pair stays out of the way unless a test sets it (its policy would match 127.0.0.1).
    await save("plain", { policy: policy("plain", { enabled: false }) });
  });
  after(async () => {
    await idp?.stop();
    await new Promise<void>((resolve) => plain?.server.close(() => resolve()));
    await https?.close();
    await store?.drop();
  });

  it("HTTPS variant: signs in and issues a token for the MCP resource", async () => {
    const tokens = await authorize(
      { issuer: idp.issuer, clientId: https.clientId, redirectUri, resource: idp.mcp },
      { username: "alice", password: USERS.alice.password },
    );
    assert.equal(decodeJwt(tokens.accessToken).payload.sub !== undefined, true);
  });

  it("Errors table: policy exists but the profile is not linked → CIMD ignored, client refused", async () => {
    await save("https-client", { policy: policy("https-client", { profiles: [] }) });
    await refused(https.clientId, /profile|ignored|associated/i);
  });

  it("Errors table: the client's domain is missing from the policy's trusted domains", async () => {
    await save("https-client", { policy: policy("https-client", { trustedDomains: ["claude.ai"] }) });
    await refused(https.clientId, /polic/i);
  });

  it("Errors table: the client's domain is missing from the profile's trusted domains", async () => {
    await save("https-client", { profile: profile("https-client", { trustedDomains: ["localhost"] }) });
    await refused(https.clientId, /trusted domain|profile/i);
  });

  it("Errors table: HTTP variant without Allow http scheme in the profile", async () => {
    await save("plain", {
      profile: profile("plain"),
      policy: policy("plain", { uriSchemes: ["https", "http"] }),
    });
    await refused(plain.clientId, /http/i);
  });

  it("HTTP variant (development): Allow http scheme ON and URI schemes https+http sign in with oauth4webapi", async () => {
    await save("plain", {
      profile: profile("plain", { allowHttpScheme: true }),
      policy: policy("plain", { uriSchemes: ["https", "http"] }),
    });
    const tokens = await authorize(
      { issuer: idp.issuer, clientId: plain.clientId, redirectUri, resource: idp.mcp },
      { username: "bob", password: USERS.bob.password },
    );
    const claims = decodeJwt(tokens.accessToken).payload;
    assert.equal(claims.sub !== undefined, true);
    assert.equal(claims.roles, undefined, "tokens issued to AI clients carry no roles");
  });

  it("an http client_id with only the https scheme in the policy matches no policy", async () => {
    await save("plain", {
      profile: profile("plain", { allowHttpScheme: true }),
      policy: policy("plain", { uriSchemes: ["https"] }),
    });
    await refused(plain.clientId, /polic/i);
  });

  it("refuses a redirect URI the document does not list", async () => {
    const started = await startAuthorization({
      issuer: idp.issuer,
      clientId: https.clientId,
      redirectUri: "http://evil.example/callback",
      resource: idp.mcp,
    });
    assert.equal(started.status, 400);
    assert.match(started.html, /redirect/i);
  });

  it("refuses a document whose client_id is not its URL", async () => {
    // A new URL: documents are cached (at least 300 s), so the served one is not changed in place.
    const impostor = https.serve("/oauth/impostor.json", () => ({
      ...https.document,
      client_id: "https://claude.ai/oauth/claude-code-client-metadata",
    }));
    await refused(impostor, /client_id/i);
  });
});
