import assert from "node:assert/strict";
import { request } from "node:http";
import { after, before, describe, it } from "node:test";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { createApiKey } from "../../src/domain/api-keys.ts";
import type { RunningService } from "../../src/service.ts";
import { startTestService } from "../support/service.ts";
import { createTestStore, STORE_KINDS, type TestStore } from "../support/stores.ts";
import { pkg, seedWide, WIDE } from "../support/wide-cve.ts";

interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The bytes as they came over the wire (not decoded). */
  body: Buffer;
}

/** GET with node:http, which, unlike fetch, shows the bytes on the wire as they are. */
function rawGet(url: string, headers: Record<string, string>): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
      );
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}

const decode = (answer: RawAnswer): string => {
  const encoding = answer.headers["content-encoding"];
  if (encoding === "br") return brotliDecompressSync(answer.body).toString("utf8");
  if (encoding === "gzip") return gunzipSync(answer.body).toString("utf8");
  assert.equal(encoding, undefined, `unexpected Content-Encoding ${encoding}`);
  return answer.body.toString("utf8");
};

for (const kind of STORE_KINDS) {
  describe(`compressed REST answers on ${kind}`, () => {
    let store: TestStore;
    let service: RunningService;
    let key: string;
    const page = (base: string, limit = WIDE.packages) =>
      `${base}/rest/applications/${WIDE.app}/insights/cve/${WIDE.cve}/occurrences?limit=${limit}`;

    before(async () => {
      store = await createTestStore(kind);
      service = await startTestService(store, {}, (handle) => seedWide(handle.db));
      key = (await createApiKey(service.store.db, { user: "compression", role: "admin", applications: [] }))
        .key;
    });
    after(async () => {
      await service?.stop();
      await store?.drop();
    });

    it("sends the page as it is without Accept-Encoding, complete and in order", async () => {
      const plain = await rawGet(page(service.gatewayUrl), { "X-API-KEY": key });
      assert.equal(plain.status, 200);
      assert.equal(plain.headers["content-encoding"], undefined);
      assert.match(String(plain.headers["content-type"]), /^application\/json/);
      const packages = JSON.parse(plain.body.toString("utf8")) as {
        name: string;
        objects: { id: string }[];
      }[];
      assert.deepEqual(
        packages.map((p) => p.name),
        Array.from({ length: WIDE.packages }, (_, i) => pkg(i + 1)),
      );
      for (const p of packages) assert.equal(p.objects.length, WIDE.objectsPerPackage, p.name);
      assert.ok(plain.body.length > 256 * 1024, `page of ${plain.body.length} bytes`);
    });

    it("streams a large schema-serialized page in pieces, complete and in order", async () => {
      // The occurrences page is JSON the store already assembled; a list serialized by its response
      // schema (here the objects search) goes out in pieces, one event-loop turn apart, without a length.
      const url = `${service.gatewayUrl}/rest/applications/${WIDE.app}/objects?q=fn&limit=1000`;
      const plain = await rawGet(url, { "X-API-KEY": key });
      assert.equal(plain.status, 200);
      assert.equal(plain.headers["content-encoding"], undefined);
      const objects = JSON.parse(plain.body.toString("utf8")) as { fullName: string; id: string }[];
      assert.equal(objects.length, 1000);
      const order = objects.map((o) => `${o.fullName}\u0000${o.id}`);
      assert.deepEqual(order, [...order].sort(), "ordered by fullName then id");
      assert.ok(plain.body.length > 128 * 1024, `page of ${plain.body.length} bytes`);
      assert.equal(plain.headers["content-length"], undefined);
      assert.equal(plain.headers["transfer-encoding"], "chunked");
    });

    for (const encoding of ["br", "gzip"] as const) {
      it(`compresses with ${encoding} through the gateway and at the REST API, once, to a fraction of the size`, async () => {
        const plain = await rawGet(page(service.gatewayUrl), { "X-API-KEY": key });
        for (const base of [service.gatewayUrl, service.restUrl]) {
          const packed = await rawGet(page(base), { "X-API-KEY": key, "Accept-Encoding": encoding });
          assert.equal(packed.status, 200);
          assert.equal(packed.headers["content-encoding"], encoding, base);
          assert.match(String(packed.headers.vary), /accept-encoding/i);
          // Decoded once it is the plain page: a second compression would not decode to JSON.
          assert.deepEqual(JSON.parse(decode(packed)), JSON.parse(plain.body.toString("utf8")));
          assert.ok(
            packed.body.length <= plain.body.length * 0.2,
            `${encoding}: ${packed.body.length} bytes for ${plain.body.length}`,
          );
        }
      });
    }

    it("prefers br when both are accepted, and honours a refusal of both", async () => {
      const both = await rawGet(page(service.gatewayUrl), {
        "X-API-KEY": key,
        "Accept-Encoding": "gzip, br",
      });
      assert.equal(both.headers["content-encoding"], "br");
      const identity = await rawGet(page(service.gatewayUrl), {
        "X-API-KEY": key,
        "Accept-Encoding": "identity",
      });
      assert.equal(identity.headers["content-encoding"], undefined);
      assert.equal(JSON.parse(decode(identity)).length, WIDE.packages);
    });

    it("leaves answers below the threshold as they are: an empty page, the health check, a problem", async () => {
      const empty = await rawGet(
        // A page past the end (an id no advisory names is a 404 since issue 30, not an empty list).
        `${service.gatewayUrl}/rest/applications/${WIDE.app}/insights/cve/${WIDE.cve}/occurrences?limit=50&skip=${WIDE.packages}`,
        { "X-API-KEY": key, "Accept-Encoding": "br" },
      );
      assert.equal(empty.status, 200);
      assert.equal(empty.headers["content-encoding"], undefined);
      assert.equal(empty.body.toString("utf8"), "[]");
      const health = await rawGet(`${service.gatewayUrl}/rest/health`, { "Accept-Encoding": "gzip" });
      assert.equal(health.headers["content-encoding"], undefined);
      assert.deepEqual(JSON.parse(decode(health)), { status: "UP" });
      const missing = await rawGet(`${service.gatewayUrl}/rest/applications/no-such-app`, {
        "X-API-KEY": key,
        "Accept-Encoding": "gzip",
      });
      assert.equal(missing.status, 404);
      assert.match(String(missing.headers["content-type"]), /^application\/problem\+json/);
      assert.equal(missing.headers["content-encoding"], undefined);
      assert.equal((JSON.parse(decode(missing)) as { status: number }).status, 404);
    });
  });
}
