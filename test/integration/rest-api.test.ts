import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { SignJWT } from "jose";
import { createApiKey } from "../../src/domain/api-keys.ts";
import type { RunningService } from "../../src/service.ts";
import { revokeApiKey } from "../../src/store/api-keys.ts";
import { FIXTURE, loadFixture } from "../support/fixture.ts";
import { startTestService } from "../support/service.ts";
import { createTestStore, STORE_KINDS, type TestStore } from "../support/stores.ts";
import { startTestIssuer, type TestIssuer } from "../support/test-issuer.ts";

const occurrences = (app: string, cve: string, query: string) =>
  `/rest/applications/${encodeURIComponent(app)}/insights/cve/${cve}/occurrences${query}`;

for (const kind of STORE_KINDS) {
  describe(`REST API over HTTP on ${kind}`, () => {
    let store: TestStore;
    let issuer: TestIssuer;
    let service: RunningService;
    let adminToken: string;
    let viewerToken: string;

    const get = (path: string, headers: Record<string, string> = {}) =>
      fetch(`${service.gatewayUrl}${path}`, { headers });
    const asAdmin = (path: string) => get(path, { authorization: `Bearer ${adminToken}` });

    before(async () => {
      issuer = await startTestIssuer();
      store = await createTestStore(kind);
      service = await startTestService(store, { issuer: issuer.issuer }, (handle) => loadFixture(handle.db));
      adminToken = await issuer.sign({ sub: "alice", roles: ["admin"], applications: [] });
      viewerToken = await issuer.sign({ sub: "bob", roles: ["viewer"], applications: ["shop"] });
    });
    after(async () => {
      await service?.stop();
      await issuer?.close();
      await store?.drop();
    });

    describe("GET /rest/applications/{name}/insights/cve/{id}/occurrences", () => {
      it("returns the affected packages with their objects, properties in name order", async () => {
        const response = await asAdmin(occurrences("shop", FIXTURE.cve, "?limit=2"));
        assert.equal(response.status, 200);
        assert.match(response.headers.get("content-type") ?? "", /^application\/json/);
        const text = await response.text();
        const object = (lib: string, fn: string) =>
          `{"fullName":"${lib}.${fn}","id":"${lib}/${fn}","mangling":"${fn}(input)","name":"${fn}","type":"JavaScript Function","typeId":"JS_FUNCTION"}`;
        const record = (lib: string) =>
          `{"name":"${lib}","objects":[${object(lib, "format")},${object(lib, "parse")}],"releaseDate":{"dateTime":"2022-05-01T10:00:00Z","source":null},"releasesPerYear":2,"saferClosestVersion":"1.1.0","safestVersion":"1.1.0","scope":"unknown","version":"1.0.0"}`;
        // Latest analysis: lib-01 was upgraded to the fixed version, so the list starts at lib-02.
        assert.equal(text, `[${record("lib-02")},${record("lib-03")}]`);
      });

      it("pages with limit and skip in a stable order", async () => {
        const names = async (query: string) =>
          ((await (await asAdmin(occurrences("shop", FIXTURE.cve, query))).json()) as { name: string }[]).map(
            (p) => p.name,
          );
        assert.deepEqual(await names("?limit=3&skip=0"), ["lib-02", "lib-03", "lib-04"]);
        assert.deepEqual(await names("?limit=3&skip=3"), ["lib-05", "lib-06", "lib-07"]);
        assert.deepEqual(await names("?limit=1000&skip=10"), ["lib-12"]);
        assert.deepEqual(await names("?limit=5&skip=50"), []);
      });

      it("answers as of a date: the latest analysis at or before it", async () => {
        const at = async (date: string) =>
          (
            (await (
              await asAdmin(occurrences("shop", FIXTURE.cve, `?limit=100&date=${encodeURIComponent(date)}`))
            ).json()) as unknown[]
          ).length;
        assert.equal(await at("2024-02-01T00:00:00Z"), 12, "before the upgrade: all 12 packages");
        assert.equal(await at(FIXTURE.firstAnalysis), 12, "at the exact instant of the first analysis");
        assert.equal(
          await at("2024-03-10T08:59:00+01:00"),
          12,
          "an offset is honoured: 07:59Z precedes the second analysis",
        );
        assert.equal(
          await at("2024-03-10T09:00:00+01:00"),
          11,
          "09:00+01:00 is the second analysis' instant",
        );
        assert.equal(await at("2024-03-10T08:00:00Z"), 11, "from the second analysis: lib-01 fixed");
        assert.equal(await at("2030-01-01T00:00:00Z"), 11);
      });

      it("resolves a GHSA alias to its CVE", async () => {
        const byAlias = await (await asAdmin(occurrences("shop", FIXTURE.ghsa, "?limit=50"))).text();
        const byCve = await (await asAdmin(occurrences("shop", FIXTURE.cve, "?limit=50"))).text();
        assert.equal(byAlias, byCve);
      });

      it("answers 404 unknown-vulnerability for a well-formed CVE no advisory names (never [])", async () => {
        const response = await asAdmin(occurrences("shop", "CVE-1999-0001", "?limit=5"));
        assert.equal(response.status, 404);
        const problem = (await response.json()) as { type: string; detail: string };
        assert.equal(problem.type, "urn:imaging:problem:unknown-vulnerability");
        assert.match(problem.detail, /^No advisory known for CVE-1999-0001; /);
      });

      const badRequests: [string, string, RegExp][] = [
        ["limit missing", occurrences("shop", FIXTURE.cve, ""), /'limit' is required/],
        [
          "limit zero",
          occurrences("shop", FIXTURE.cve, "?limit=0"),
          /'limit' must be an integer from 1 to 1000, got '0'/,
        ],
        ["limit too large", occurrences("shop", FIXTURE.cve, "?limit=1001"), /from 1 to 1000/],
        ["limit not a number", occurrences("shop", FIXTURE.cve, "?limit=ten"), /got 'ten'/],
        ["limit fractional", occurrences("shop", FIXTURE.cve, "?limit=1.5"), /got '1.5'/],
        ["limit repeated", occurrences("shop", FIXTURE.cve, "?limit=1&limit=2"), /more than once/],
        [
          "negative skip",
          occurrences("shop", FIXTURE.cve, "?limit=5&skip=-1"),
          /'skip' must be a non-negative integer/,
        ],
        ["fractional skip", occurrences("shop", FIXTURE.cve, "?limit=5&skip=0.5"), /'skip'/],
        ["date only", occurrences("shop", FIXTURE.cve, "?limit=5&date=2024-01-01"), /ISO 8601 date-time/],
        [
          "impossible date",
          occurrences("shop", FIXTURE.cve, "?limit=5&date=2024-02-30T00:00:00Z"),
          /ISO 8601/,
        ],
        ["garbage date", occurrences("shop", FIXTURE.cve, "?limit=5&date=yesterday"), /got 'yesterday'/],
        ["back-quote in name", occurrences("sh`op", FIXTURE.cve, "?limit=5"), /back-quote/],
        ["malformed CVE", occurrences("shop", "CVE-21-1", "?limit=5"), /not a CVE reference/],
        ["SQL in CVE", occurrences("shop", "CVE-2021-1'%20OR%201=1", "?limit=5"), /not a CVE reference/],
      ];
      for (const [what, path, detail] of badRequests) {
        it(`400 problem+json: ${what}`, async () => {
          const response = await asAdmin(path);
          assert.equal(response.status, 400);
          assert.match(response.headers.get("content-type") ?? "", /^application\/problem\+json/);
          const body = (await response.json()) as {
            status: number;
            title: string;
            detail: string;
            type: string;
          };
          assert.equal(body.status, 400);
          assert.equal(body.title, "Bad Request");
          assert.match(body.detail, detail);
        });
      }

      it("404 for an unknown application", async () => {
        const response = await asAdmin(occurrences("nope", FIXTURE.cve, "?limit=5"));
        assert.equal(response.status, 404);
        assert.match(((await response.json()) as { detail: string }).detail, /No application named 'nope'/);
      });

      it("404 when no analysis exists at or before the date", async () => {
        const response = await asAdmin(
          occurrences("shop", FIXTURE.cve, "?limit=5&date=2020-01-01T00:00:00Z"),
        );
        assert.equal(response.status, 404);
        assert.match(
          ((await response.json()) as { detail: string }).detail,
          /no analysis at or before 2020-01-01T00:00:00.000Z/,
        );
      });

      it("years 0000-0099 are dates like any other (not mapped to 1900-1999)", async () => {
        for (const date of ["0001-01-01T00:00:00Z", "0099-12-31T23:59:59Z", "0000-01-01T00:00:00Z"]) {
          const response = await asAdmin(
            occurrences("shop", FIXTURE.cve, `?limit=5&date=${encodeURIComponent(date)}`),
          );
          assert.equal(response.status, 404, date);
          assert.match(
            ((await response.json()) as { detail: string }).detail,
            new RegExp(`no analysis at or before ${date.slice(0, 19)}\\.000Z`),
          );
        }
      });

      it("403 for an application the viewer was not granted; 200 for a granted one", async () => {
        const denied = await get(occurrences("secret", FIXTURE.cve, "?limit=5"), {
          authorization: `Bearer ${viewerToken}`,
        });
        assert.equal(denied.status, 403);
        assert.match(denied.headers.get("content-type") ?? "", /^application\/problem\+json/);
        const allowed = await get(occurrences("shop", FIXTURE.cve, "?limit=5"), {
          authorization: `Bearer ${viewerToken}`,
        });
        assert.equal(allowed.status, 200);
      });
    });

    describe("credentials", () => {
      it("401 with a Bearer challenge and problem+json when none is sent", async () => {
        const response = await get(occurrences("shop", FIXTURE.cve, "?limit=5"));
        assert.equal(response.status, 401);
        assert.match(response.headers.get("www-authenticate") ?? "", /^Bearer /);
        assert.match(response.headers.get("content-type") ?? "", /^application\/problem\+json/);
      });

      it("an Authorization header, even empty, is the credential: a valid X-API-KEY beside it does not count", async () => {
        const { key } = await createApiKey(service.store.db, {
          user: "both",
          role: "admin",
          applications: [],
        });
        assert.equal(
          (await get(occurrences("shop", FIXTURE.cve, "?limit=5"), { "x-api-key": key })).status,
          200,
        );
        for (const authorization of ["", "Basic eDp5", "Bearer not-a-jwt"]) {
          const response = await get(occurrences("shop", FIXTURE.cve, "?limit=5"), {
            authorization,
            "x-api-key": key,
          });
          assert.equal(response.status, 401, JSON.stringify(authorization));
          assert.match(response.headers.get("www-authenticate") ?? "", /error="invalid_token"/);
        }
      });

      const rejected: [string, () => Promise<string>, RegExp][] = [
        [
          "expired",
          () =>
            issuer.sign({ sub: "x", roles: ["admin"] }, { expiresIn: Math.floor(Date.now() / 1000) - 120 }),
          /expired/,
        ],
        ["not yet valid", () => issuer.sign({ sub: "x", roles: ["admin"] }, { notBefore: "10m" }), /nbf/],
        [
          "wrong audience",
          () => issuer.sign({ sub: "x", roles: ["admin"], aud: "http://127.0.0.1:8090/mcp" }),
          /aud/,
        ],
        [
          "wrong issuer",
          () => issuer.sign({ sub: "x", roles: ["admin"], iss: "https://evil.example" }),
          /iss/,
        ],
        [
          "unknown key id",
          () => issuer.sign({ sub: "x", roles: ["admin"] }, { kid: "rotated-away" }),
          /unknown key|signature/,
        ],
        [
          "alg none",
          async () => {
            const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
            const now = Math.floor(Date.now() / 1000);
            return `${b64({ alg: "none" })}.${b64({ sub: "x", roles: ["admin"], iss: issuer.issuer, aud: "imaging-api", exp: now + 300 })}.`;
          },
          /malformed|algorithm/,
        ],
        [
          "HMAC signed with the public key",
          async () =>
            new SignJWT({ sub: "x", roles: ["admin"] })
              .setProtectedHeader({ alg: "HS256", kid: "test-key-1" })
              .setIssuer(issuer.issuer)
              .setAudience("imaging-api")
              .setExpirationTime("5m")
              .sign(new TextEncoder().encode(JSON.stringify(issuer.publicJwk))),
          /algorithm/,
        ],
        [
          "tampered signature",
          async () => {
            const token = await issuer.sign({ sub: "x", roles: ["admin"] });
            const [h, p, s] = token.split(".");
            return `${h}.${p}.${(s as string).startsWith("A") ? `B${s?.slice(1)}` : `A${s?.slice(1)}`}`;
          },
          /signature/,
        ],
      ];
      for (const [what, token, reason] of rejected) {
        it(`401 for a token that is ${what}`, async () => {
          const response = await get(occurrences("shop", FIXTURE.cve, "?limit=5"), {
            authorization: `Bearer ${await token()}`,
          });
          assert.equal(response.status, 401);
          assert.match(response.headers.get("www-authenticate") ?? "", /^Bearer .*error="invalid_token"/);
          assert.match(((await response.json()) as { detail: string }).detail, reason);
        });
      }

      it("accepts API keys in X-API-KEY, scoped like tokens, and stops accepting a revoked key", async () => {
        const { key: viewerKey, id } = await createApiKey(service.store.db, {
          user: "script",
          role: "viewer",
          applications: ["shop"],
        });
        assert.equal(
          (await get(occurrences("shop", FIXTURE.cve, "?limit=5"), { "x-api-key": viewerKey })).status,
          200,
        );
        assert.equal(
          (await get(occurrences("secret", FIXTURE.cve, "?limit=5"), { "x-api-key": viewerKey })).status,
          403,
        );
        await revokeApiKey(service.store.db, id);
        assert.equal(
          (await get(occurrences("shop", FIXTURE.cve, "?limit=5"), { "x-api-key": viewerKey })).status,
          401,
        );
        assert.equal(
          (await get(occurrences("shop", FIXTURE.cve, "?limit=5"), { "x-api-key": "imk_nonsense" })).status,
          401,
        );
      });
    });

    describe("GET /rest/applications and /rest/applications/{name}", () => {
      it("lists every application for an admin and only granted ones for a viewer", async () => {
        const all = (await (await asAdmin("/rest/applications")).json()) as { name: string }[];
        assert.deepEqual(
          all.map((a) => a.name),
          ["secret", "shop"],
        );
        const mine = (await (
          await get("/rest/applications", { authorization: `Bearer ${viewerToken}` })
        ).json()) as {
          name: string;
          latestAnalysis: { dateTime: string };
          analysisCount: number;
        }[];
        assert.deepEqual(mine, [
          {
            analysisCount: 2,
            demo: false,
            description: "Fixture shop",
            latestAnalysis: { dateTime: "2024-03-10T08:00:00Z" },
            name: "shop",
          },
        ]);
      });

      it("describes an application: history and counts of the latest analysis", async () => {
        const response = await asAdmin("/rest/applications/shop");
        assert.equal(response.status, 200);
        assert.deepEqual(await response.json(), {
          analyses: [{ dateTime: "2024-01-10T08:00:00Z" }, { dateTime: "2024-03-10T08:00:00Z" }],
          counts: {
            externalObjects: 24,
            packages: 12,
            references: 24,
            vulnerabilities: 1,
            vulnerablePackages: 11,
          },
          demo: false,
          description: "Fixture shop",
          latestAnalysis: { dateTime: "2024-03-10T08:00:00Z" },
          name: "shop",
        });
      });

      it("lists the CVEs of an application with counts, filterable by severity", async () => {
        const response = await asAdmin("/rest/applications/shop/insights/cve?limit=10");
        assert.deepEqual(await response.json(), [
          {
            affectedPackageCount: 11,
            aliases: [FIXTURE.ghsa],
            id: FIXTURE.cve,
            referringObjectCount: 22,
            score: 9.8,
            severity: "CRITICAL",
            summary: "Fixture advisory",
          },
        ]);
        assert.deepEqual(
          await (await asAdmin("/rest/applications/shop/insights/cve?limit=10&severity=LOW")).json(),
          [],
        );
        assert.equal(
          (await asAdmin("/rest/applications/shop/insights/cve?limit=10&severity=BAD")).status,
          400,
        );
      });
    });

    describe("documents and health", () => {
      it("publishes OpenAPI 3.1 describing the occurrences operation", async () => {
        const response = await get("/rest/openapi.json");
        assert.equal(response.status, 200);
        const doc = (await response.json()) as {
          openapi: string;
          paths: Record<string, { get?: { parameters?: { name: string; required?: boolean }[] } }>;
        };
        assert.equal(doc.openapi, "3.1.0");
        const operation = doc.paths["/rest/applications/{name}/insights/cve/{id}/occurrences"]?.get;
        assert.ok(operation, "occurrences path documented");
        const limit = operation.parameters?.find((p) => p.name === "limit");
        assert.equal(limit?.required, true);
      });

      it("serves an open healthcheck on the gateway", async () => {
        const response = await get("/mcp/healthcheck");
        assert.equal(response.status, 200);
        const body = (await response.json()) as { status: string; service: string; details: object };
        assert.equal(body.service, "imaging-services");
        assert.ok(["UP", "DEGRADED"].includes(body.status));
        assert.equal(typeof body.details, "object");
      });

      it("answers unknown routes with JSON, never HTML", async () => {
        for (const path of ["/nope", "/rest/nope"]) {
          const response = await asAdmin(path);
          assert.equal(response.status, 404);
          assert.match(response.headers.get("content-type") ?? "", /json/);
        }
      });
    });
  });
}
