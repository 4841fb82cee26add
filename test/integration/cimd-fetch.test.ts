import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { createServer, type Server } from "node:https";
import type { AddressInfo, LookupFunction } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type CimdFetcherOptions, createCimdFetcher } from "../../src/idp/cimd/fetcher.ts";
import type { CimdConfig } from "../../src/idp/cimd/model.ts";
import { type CimdResolution, resolveCimdClient } from "../../src/idp/cimd/resolve.ts";

/** A throwaway CA and a certificate for localhost, 127.0.0.1 and docs.rebind.test, made with openssl. */
function makeTestPki(dir: string): { caFile: string; ca: string; key: string; cert: string } {
  const run = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  run(
    "req",
    "-x509",
    ...ec,
    "-keyout",
    "ca.key",
    "-out",
    "ca.pem",
    "-days",
    "2",
    "-subj",
    "/CN=imaging test CA",
    "-addext",
    "basicConstraints=critical,CA:TRUE",
    "-addext",
    "keyUsage=critical,keyCertSign,cRLSign",
  );
  run("req", "-new", ...ec, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost");
  writeFileSync(
    join(dir, "server.ext"),
    "subjectAltName=DNS:localhost,DNS:docs.rebind.test,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n" +
      "keyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n",
  );
  run(
    "x509",
    "-req",
    "-in",
    "server.csr",
    "-CA",
    "ca.pem",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-out",
    "server.pem",
    "-days",
    "2",
    "-extfile",
    "server.ext",
  );
  const read = (f: string) => readFileSync(join(dir, f), "utf8");
  return {
    caFile: join(dir, "ca.pem"),
    ca: read("ca.pem"),
    key: read("server.key"),
    cert: read("server.pem"),
  };
}

type Handler = (res: ServerResponse, base: string) => void;

/** `localhost` resolved by the test: docs.rebind.test resolves to 127.0.0.1, as a rebinding DNS would answer. */
const rebindingLookup: LookupFunction = (hostname, options, callback) => {
  const address = hostname === "docs.rebind.test" || hostname === "localhost" ? "127.0.0.1" : undefined;
  const cb = callback as (...args: unknown[]) => void;
  if (!address) return cb(Object.assign(new Error(`ENOTFOUND ${hostname}`), { code: "ENOTFOUND" }));
  if ((options as { all?: boolean }).all) return cb(null, [{ address, family: 4 }]);
  return cb(null, address, 4);
};

describe("CIMD document fetch over TLS", () => {
  let dir: string;
  let pki: ReturnType<typeof makeTestPki>;
  let server: Server;
  let base: string;
  let port: number;
  const hits = new Map<string, number>();
  const routes = new Map<string, Handler>();
  const fetchers: { close(): Promise<void> }[] = [];

  const json = (res: ServerResponse, body: unknown, headers: Record<string, string> = {}) => {
    const text = JSON.stringify(body);
    res.writeHead(200, {
      "content-type": "application/json",
      "content-length": Buffer.byteLength(text),
      ...headers,
    });
    res.end(text);
  };
  const documentFor = (clientId: string) => ({
    client_id: clientId,
    client_name: "Test client",
    redirect_uris: ["http://localhost/callback", "http://127.0.0.1/callback"],
  });
  const fetcher = (options: CimdFetcherOptions = {}) => {
    const created = createCimdFetcher({ ca: pki.ca, ...options });
    fetchers.push(created);
    return created;
  };
  /** The HTTPS variant for a client served on this machine; the policy lists `policyDomains`. */
  const config = (policyDomains: string[], profileDomains = ["localhost", "127.0.0.1"]): CimdConfig => ({
    profiles: [
      {
        name: "cimd-profile-local",
        executor: "client-id-metadata-document",
        allowHttpScheme: false,
        restrictSameDomain: false,
        onlyAllowConfidentialClient: false,
        trustedDomains: profileDomains,
      },
    ],
    policies: [
      {
        name: "cimd-policy-local",
        condition: "client-id-uri",
        uriSchemes: ["https"],
        trustedDomains: policyDomains,
        profiles: ["cimd-profile-local"],
        enabled: true,
      },
    ],
  });
  const refusedBy = (result: CimdResolution, rule: string) => {
    assert.equal(result.ok, false, `expected a refusal by ${rule}`);
    if (!result.ok) assert.equal(result.rule, rule, result.description);
    return result.ok ? "" : result.description;
  };
  const hitCount = (path: string) => hits.get(path) ?? 0;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "imaging-cimd-pki-"));
    pki = makeTestPki(dir);
    server = createServer({ key: pki.key, cert: pki.cert }, (req, res) => {
      const path = new URL(req.url ?? "/", "https://x").pathname;
      hits.set(path, hitCount(path) + 1);
      const handler = routes.get(path);
      if (handler) handler(res, base);
      else {
        res.writeHead(404, { "content-type": "application/json" });
        res.end("{}");
      }
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
    base = `https://localhost:${port}`;
    routes.set("/oauth/client.json", (res) => json(res, documentFor(`${base}/oauth/client.json`)));
    routes.set("/oauth/big.json", (res) =>
      json(res, { ...documentFor(`${base}/oauth/big.json`), padding: "x".repeat(6000) }),
    );
    routes.set("/oauth/big-chunked.json", (res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write(`{"client_id":"${base}/oauth/big-chunked.json","padding":"`);
      for (let i = 0; i < 10; i++) res.write("y".repeat(1000));
      res.end('"}');
    });
    routes.set("/oauth/redirect.json", (res) => {
      res.writeHead(302, { location: `${base}/oauth/client.json` });
      res.end();
    });
    routes.set("/oauth/slow.json", (res) => {
      setTimeout(() => json(res, documentFor(`${base}/oauth/slow.json`)), 1500).unref();
    });
    routes.set("/oauth/not-json.json", (res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end("<html>");
    });
  });

  after(async () => {
    await Promise.all(fetchers.map((f) => f.close()));
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("fetches from loopback when the policy lists the host itself", async () => {
    const clientId = `${base}/oauth/client.json`;
    const result = await resolveCimdClient(clientId, {
      config: config(["localhost"]),
      fetcher: fetcher(),
      redirectUri: "http://localhost:61000/callback",
    });
    assert.ok(result.ok, !result.ok ? result.description : "");
    assert.equal(result.metadata.client_id, clientId);
    assert.equal(result.metadata.token_endpoint_auth_method, "none");
  });

  it("refuses loopback otherwise (a wildcard is not an explicit listing): no request reaches the server", async () => {
    const before = hitCount("/oauth/client.json");
    const description = refusedBy(
      await resolveCimdClient(`${base}/oauth/client.json`, {
        config: config(["*.localhost"]),
        fetcher: fetcher(),
      }),
      "fetch-special-address",
    );
    assert.match(
      description,
      /^Client metadata fetch failed: localhost is at 127\.0\.0\.1, a private, loopback/,
    );
    assert.equal(hitCount("/oauth/client.json"), before);
  });

  it("checks the address actually connected: a public-looking name resolving to loopback fails (DNS rebinding)", async () => {
    const clientId = `https://docs.rebind.test:${port}/oauth/rebind.json`;
    routes.set("/oauth/rebind.json", (res) => json(res, documentFor(clientId)));
    const profileDomains = ["*.rebind.test", "localhost", "127.0.0.1"];
    refusedBy(
      await resolveCimdClient(clientId, {
        config: config(["*.rebind.test"], profileDomains),
        fetcher: fetcher({ lookup: rebindingLookup }),
      }),
      "fetch-special-address",
    );
    assert.equal(hitCount("/oauth/rebind.json"), 0);
    const trusted = await resolveCimdClient(clientId, {
      config: config(["docs.rebind.test"], profileDomains),
      fetcher: fetcher({ lookup: rebindingLookup }),
    });
    assert.ok(trusted.ok, !trusted.ok ? trusted.description : "");
  });

  it("caps the document at 5000 bytes, declared or streamed", async () => {
    for (const path of ["/oauth/big.json", "/oauth/big-chunked.json"]) {
      const description = refusedBy(
        await resolveCimdClient(`${base}${path}`, { config: config(["localhost"]), fetcher: fetcher() }),
        "fetch-size",
      );
      assert.match(description, /5000 bytes/);
    }
  });

  it("does not follow redirects", async () => {
    const target = hitCount("/oauth/client.json");
    const description = refusedBy(
      await resolveCimdClient(`${base}/oauth/redirect.json`, {
        config: config(["localhost"]),
        fetcher: fetcher(),
      }),
      "fetch-redirect",
    );
    assert.match(
      description,
      /answered 302, a redirect to .*\/oauth\/client\.json: redirects are not followed/,
    );
    assert.equal(hitCount("/oauth/client.json"), target);
  });

  it("gives up after the timeout", async () => {
    const started = Date.now();
    const description = refusedBy(
      await resolveCimdClient(`${base}/oauth/slow.json`, {
        config: config(["localhost"]),
        fetcher: fetcher({ timeoutMs: 300 }),
      }),
      "fetch-timeout",
    );
    assert.match(description, /within 300 ms/);
    assert.ok(Date.now() - started < 1400, `took ${Date.now() - started} ms`);
  });

  it("refuses a certificate it cannot verify without the test CA, and trusts it from extraCaFile", async () => {
    const untrusted = createCimdFetcher();
    fetchers.push(untrusted);
    const description = refusedBy(
      await resolveCimdClient(`${base}/oauth/client.json`, {
        config: config(["localhost"]),
        fetcher: untrusted,
      }),
      "fetch-tls",
    );
    assert.match(description, /TLS certificate of localhost:\d+ not trusted/);
    const fromFile = createCimdFetcher({ extraCaFile: pki.caFile });
    fetchers.push(fromFile);
    const ok = await resolveCimdClient(`${base}/oauth/client.json`, {
      config: config(["localhost"]),
      fetcher: fromFile,
    });
    assert.ok(ok.ok, !ok.ok ? ok.description : "");
  });

  it("reports an error status and a body that is not JSON", async () => {
    refusedBy(
      await resolveCimdClient(`${base}/oauth/missing.json`, {
        config: config(["localhost"]),
        fetcher: fetcher(),
      }),
      "fetch-status",
    );
    refusedBy(
      await resolveCimdClient(`${base}/oauth/not-json.json`, {
        config: config(["localhost"]),
        fetcher: fetcher(),
      }),
      "document-json",
    );
  });

  describe("cache", () => {
    let clock = 0;
    const now = () => clock;
    const cached = (path: string, headers: () => Record<string, string>) =>
      routes.set(path, (res) => json(res, documentFor(`${base}${path}`), headers()));
    const fetchAt = async (f: ReturnType<typeof fetcher>, path: string, at: number) => {
      clock = at;
      await f.fetchDocument(`${base}${path}`, { allowSpecialAddresses: true });
      return hitCount(path);
    };

    it("keeps a short max-age for 300 s", async () => {
      cached("/oauth/short.json", () => ({ "cache-control": "max-age=10" }));
      const f = fetcher({ now });
      assert.equal(await fetchAt(f, "/oauth/short.json", 1_000_000), 1);
      assert.equal(await fetchAt(f, "/oauth/short.json", 1_000_000 + 11_000), 1);
      assert.equal(await fetchAt(f, "/oauth/short.json", 1_000_000 + 299_000), 1);
      assert.equal(await fetchAt(f, "/oauth/short.json", 1_000_000 + 301_000), 2);
    });

    it("keeps a long max-age one day at most", async () => {
      cached("/oauth/long.json", () => ({ "cache-control": "public, max-age=31536000" }));
      const f = fetcher({ now });
      assert.equal(await fetchAt(f, "/oauth/long.json", 0), 1);
      assert.equal(await fetchAt(f, "/oauth/long.json", 86_399_000), 1);
      assert.equal(await fetchAt(f, "/oauth/long.json", 86_401_000), 2);
    });

    it("uses Expires when there is no max-age", async () => {
      cached("/oauth/expires.json", () => ({
        expires: new Date(clock + 3_600_000).toUTCString(),
        date: new Date(clock).toUTCString(),
      }));
      const f = fetcher({ now });
      const start = Date.parse("2026-01-01T00:00:00Z");
      assert.equal(await fetchAt(f, "/oauth/expires.json", start), 1);
      assert.equal(await fetchAt(f, "/oauth/expires.json", start + 3_599_000), 1);
      assert.equal(await fetchAt(f, "/oauth/expires.json", start + 3_601_000), 2);
    });

    it("shares one fetch among concurrent requests", async () => {
      cached("/oauth/concurrent.json", () => ({}));
      const f = fetcher();
      const url = `${base}/oauth/concurrent.json`;
      await Promise.all([1, 2, 3].map(() => f.fetchDocument(url, { allowSpecialAddresses: true })));
      assert.equal(hitCount("/oauth/concurrent.json"), 1);
    });

    it("never lets the cache bypass a policy change", async () => {
      cached("/oauth/policy.json", () => ({ "cache-control": "max-age=3600" }));
      const f = fetcher();
      const clientId = `${base}/oauth/policy.json`;
      const live = config(["localhost"]);
      const context = { config: () => live, fetcher: f };
      assert.ok((await resolveCimdClient(clientId, context)).ok);
      (live.policies[0] as { profiles: string[] }).profiles = [];
      refusedBy(await resolveCimdClient(clientId, context), "policy-not-linked");
      (live.policies[0] as { profiles: string[] }).profiles = ["cimd-profile-local"];
      (live.profiles[0] as { trustedDomains: string[] }).trustedDomains = ["127.0.0.1"];
      refusedBy(await resolveCimdClient(clientId, context), "profile-trusted-domain");
      (live.profiles[0] as { trustedDomains: string[] }).trustedDomains = ["localhost", "127.0.0.1"];
      // The loopback exemption is withdrawn: the cached copy fetched under it is not reused.
      (live.policies[0] as { trustedDomains: string[] }).trustedDomains = ["*.localhost"];
      refusedBy(await resolveCimdClient(clientId, context), "fetch-special-address");
      (live.policies[0] as { trustedDomains: string[] }).trustedDomains = ["localhost"];
      assert.ok((await resolveCimdClient(clientId, context)).ok);
      assert.equal(hitCount("/oauth/policy.json"), 1);
    });
  });
});
