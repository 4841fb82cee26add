import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { createRegistryFetcher } from "../../src/scanner/registry/cached-fetch.ts";

/** A registry on loopback: an ETag'd packument, an immutable artifact, a 404 and a 500. */
describe("registry fetcher (src/scanner/registry/cached-fetch.ts) against a local HTTP server", () => {
  let server: Server;
  let base: string;
  let cacheDir: string;
  const requests: { url: string; ifNoneMatch: string | undefined; authorization: string | undefined }[] = [];
  let packument = JSON.stringify({ name: "demo", versions: { "1.0.0": {} } });
  const etag = () => `"${Buffer.from(packument).length}"`;
  const hits = (path: string) => requests.filter((r) => r.url === path);

  before(async () => {
    cacheDir = mkdtempSync(join(tmpdir(), "imaging-fetch-cache-"));
    server = createServer((request: IncomingMessage, response) => {
      requests.push({
        url: request.url ?? "",
        ifNoneMatch: request.headers["if-none-match"],
        authorization: request.headers.authorization,
      });
      if (request.url === "/demo") {
        if (request.headers["if-none-match"] === etag()) {
          response.writeHead(304, { etag: etag(), "cache-control": "max-age=300" }).end();
          return;
        }
        response.writeHead(200, {
          "content-type": "application/json",
          etag: etag(),
          "cache-control": "max-age=300",
        });
        response.end(packument);
      } else if (request.url === "/lib/1.0/lib-1.0.jar") {
        response.writeHead(200, { "content-type": "application/java-archive" }).end("PK-jar-bytes");
      } else if (request.url === "/broken") {
        response.writeHead(500).end("oops");
      } else {
        response.writeHead(404).end();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(cacheDir, { recursive: true, force: true });
  });

  it("downloads once, then revalidates with the ETag (304) and answers from the cache", async () => {
    const fetcher = createRegistryFetcher({ cacheDir, offline: false });
    const first = await fetcher.get(`${base}/demo`);
    assert.equal(first.kind, "ok");
    assert.ok(first.kind === "ok" && !first.fromCache);
    const second = await fetcher.get(`${base}/demo`);
    assert.ok(second.kind === "ok" && second.fromCache, JSON.stringify(second));
    assert.equal(second.body.toString(), packument);
    const demo = hits("/demo");
    assert.equal(demo.length, 2, "the second request reached the server to revalidate");
    assert.equal(demo[1]?.ifNoneMatch, etag());
  });

  it("downloads again when the content changed (new ETag)", async () => {
    packument = JSON.stringify({ name: "demo", versions: { "1.0.0": {}, "1.1.0": {} } });
    const fetcher = createRegistryFetcher({ cacheDir, offline: false });
    const outcome = await fetcher.get(`${base}/demo`);
    assert.ok(outcome.kind === "ok" && !outcome.fromCache);
    assert.equal(outcome.body.toString(), packument);
  });

  it("never asks again for an immutable artifact it has", async () => {
    const fetcher = createRegistryFetcher({ cacheDir, offline: false });
    const url = `${base}/lib/1.0/lib-1.0.jar`;
    assert.equal((await fetcher.get(url, { immutable: true })).kind, "ok");
    const again = await fetcher.get(url, { immutable: true });
    assert.ok(again.kind === "ok" && again.fromCache);
    assert.equal(again.body.toString(), "PK-jar-bytes");
    assert.equal(hits("/lib/1.0/lib-1.0.jar").length, 1);
  });

  it("offline: answers what it has from the cache, reports the rest as not cached", async () => {
    const before = requests.length;
    const offline = createRegistryFetcher({ cacheDir, offline: true });
    const cached = await offline.get(`${base}/demo`);
    assert.ok(cached.kind === "ok" && cached.fromCache);
    assert.deepEqual(await offline.get(`${base}/never-fetched`), { kind: "not-cached" });
    assert.equal(requests.length, before, "offline sends no request");
  });

  it("reports 404 as not found", async () => {
    const fetcher = createRegistryFetcher({ cacheDir, offline: false });
    assert.deepEqual(await fetcher.get(`${base}/missing`), { kind: "not-found", status: 404 });
  });

  it("never prints the credentials of a mirror URL", async () => {
    const fetcher = createRegistryFetcher({ cacheDir, offline: false });
    const withCredentials = base.replace("http://", "http://ci-user:s3cr3t-token@");
    const failed = await fetcher.get(`${withCredentials}/broken`);
    assert.equal(failed.kind, "failed");
    assert.ok(failed.kind === "failed");
    assert.match(failed.reason, /HTTP 500/);
    assert.doesNotMatch(failed.reason, /s3cr3t-token|ci-user/);
    const unreachable = await createRegistryFetcher({ cacheDir, offline: false, timeoutMs: 2_000 }).get(
      "http://ci-user:s3cr3t-token@127.0.0.1:1/x",
    );
    assert.ok(unreachable.kind === "failed");
    assert.doesNotMatch(unreachable.reason, /s3cr3t-token|ci-user/);
  });
});
