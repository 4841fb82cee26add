import assert from "node:assert/strict";
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { createCimdClient } from "../../src/store/cimd.ts";
import { type IdpService, seedUsers, startIdpService } from "../support/idp-service.ts";
import { startAuthorization } from "../support/oauth-flow.ts";
import { createTestStore, type TestStore } from "../support/stores.ts";

/**
 * Client metadata documents the embedded identity provider must refuse, through the real provider
 * and a document server whose answers the test chooses: a content type other than JSON, a client
 * authentication this server cannot honour, and a document that fails, fetched only once per
 * authorization request.
 */
describe("CIMD documents: content type, client authentication, one fetch per request", () => {
  let store: TestStore;
  let idp: IdpService;
  let documents: Server;
  let origin: string;
  const requests = new Map<string, number>();
  const hanging: ServerResponse[] = [];
  const redirectUri = "http://127.0.0.1:41999/callback";

  const document = (path: string, extra: Record<string, unknown> = {}) => ({
    client_id: `${origin}${path}`,
    client_name: "Document Test Client",
    redirect_uris: ["http://127.0.0.1/callback"],
    token_endpoint_auth_method: "none",
    ...extra,
  });
  /** path → [content type (undefined: none), body] */
  const answers: Record<string, (path: string) => [string | undefined, unknown]> = {
    "/json": (p) => ["application/json; charset=utf-8", document(p)],
    "/plain": (p) => ["text/plain", document(p)],
    "/html": (p) => ["text/html; charset=utf-8", document(p)],
    "/untyped": (p) => [undefined, document(p)],
    "/private-key-jwt": (p) => [
      "application/json",
      document(p, { token_endpoint_auth_method: "private_key_jwt", jwks_uri: `${origin}/jwks` }),
    ],
  };

  const attempt = (path: string) =>
    startAuthorization({ issuer: idp.issuer, clientId: `${origin}${path}`, redirectUri, resource: idp.mcp });
  const refused = async (path: string, rule: string) => {
    const started = await attempt(path);
    assert.equal(started.status, 400, `refused with 400, got ${started.status}`);
    assert.match(started.html, new RegExp(`rule ${rule}`));
    assert.doesNotMatch(started.pageUrl, /interaction/, "no sign-in page for a refused client");
    return started;
  };

  before(async () => {
    documents = createServer((req, res) => {
      const path = req.url ?? "";
      requests.set(path, (requests.get(path) ?? 0) + 1);
      if (path === "/hang") {
        hanging.push(res);
        return;
      }
      if (path === "/broken") {
        res.writeHead(500).end();
        return;
      }
      const answer = answers[path];
      if (!answer) {
        res.writeHead(404).end();
        return;
      }
      const [type, body] = answer(path);
      res.writeHead(200, type ? { "content-type": type } : {});
      res.end(JSON.stringify(body));
    });
    await new Promise<void>((resolve) => documents.listen(0, "127.0.0.1", resolve));
    origin = `http://127.0.0.1:${(documents.address() as AddressInfo).port}`;
    store = await createTestStore("sqlite");
    idp = await startIdpService(store, {
      seed: async (handle) => {
        await seedUsers(handle.db);
        // The HTTP variant for a development document server on loopback (the policy names the host).
        await createCimdClient(handle.db, {
          client: "documents",
          clientId: `${origin}/json`,
          profile: {
            name: "cimd-profile-documents",
            executor: "client-id-metadata-document",
            allowHttpScheme: true,
            restrictSameDomain: false,
            onlyAllowConfidentialClient: false,
            trustedDomains: ["127.0.0.1", "localhost"],
          },
          policy: {
            name: "cimd-policy-documents",
            condition: "client-id-uri",
            uriSchemes: ["https", "http"],
            trustedDomains: ["127.0.0.1"],
            profiles: ["cimd-profile-documents"],
            enabled: true,
          },
        });
      },
    });
  });
  after(async () => {
    for (const res of hanging) res.destroy();
    documents?.closeAllConnections();
    await new Promise<void>((resolve) => (documents ? documents.close(() => resolve()) : resolve()));
    await idp?.stop();
    await store?.drop();
  });

  it("a document served as application/json (with a charset) is accepted", async () => {
    const started = await attempt("/json");
    assert.equal(started.status, 200);
    assert.match(started.pageUrl, /interaction/, "the sign-in page");
  });

  for (const [path, what] of [
    ["/plain", "text/plain"],
    ["/html", "text/html"],
    ["/untyped", "no content type"],
  ] as const) {
    it(`a document served as ${what} is refused, naming the rule`, async () => {
      const started = await refused(path, "fetch-content-type");
      assert.match(started.html, /must be served as application\/json/);
    });
  }

  it("a document declaring private_key_jwt is refused, not treated as a public client", async () => {
    const started = await refused("/private-key-jwt", "document-auth-method-unsupported");
    assert.match(started.html, /private_key_jwt is not supported/);
  });

  it("a document that cannot be fetched is fetched once per authorization request", async () => {
    for (const [path, rule] of [
      ["/broken", "fetch-status"],
      ["/plain", "fetch-content-type"],
    ] as const) {
      const before = requests.get(path) ?? 0;
      await refused(path, rule);
      assert.equal((requests.get(path) ?? 0) - before, 1, `${path}: one fetch for one request`);
    }
  });

  it("a hanging document is fetched once: the request ends after one fetch timeout", async () => {
    await refused("/hang", "fetch-timeout");
    assert.equal(requests.get("/hang"), 1, "one fetch, not one per lookup");
  });
});
