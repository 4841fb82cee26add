import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { RunningService } from "../../src/service.ts";
import { loadPortalFixture, PORTAL } from "../support/fixture.ts";
import { startTestService } from "../support/service.ts";
import { createTestStore, STORE_KINDS, type TestStore } from "../support/stores.ts";
import { startTestIssuer, type TestIssuer } from "../support/test-issuer.ts";

const FEBRUARY = "date=2024-02-15T00:00:00Z";

const churn = (version: string, releasedAt: string) => ({
  ecosystem: "npm",
  factsPending: false,
  maxSeverity: null,
  name: "churn",
  releaseDate: { dateTime: releasedAt, source: null },
  releasesPerYear: 14,
  saferClosestVersion: "1.15.0",
  safestVersion: "1.15.0",
  scope: "unknown",
  sources: [],
  version,
  vulnerabilities: [],
});

const jsCaller = (name: string) => ({
  fullName: `portal.app.${name}`,
  id: `app/${name}`,
  name,
  type: "JavaScript Function",
  typeId: "JS_FUNCTION",
});

const coreObject = (name: string, kind: "class" | "method") => ({
  fullName: kind === "class" ? "org.example.core.Util" : `org.example.core.Util.${name}`,
  id: kind === "class" ? "core/Util" : `core/Util.${name}`,
  mangling: kind === "class" ? "" : `${name}()`,
  name,
  type: kind === "class" ? "Java Class" : "Java Method",
  typeId: kind === "class" ? "JV_CLASS" : "JV_METHOD",
});

for (const kind of STORE_KINDS) {
  describe(`REST packages, interactions and objects on ${kind}`, () => {
    let store: TestStore;
    let issuer: TestIssuer;
    let service: RunningService;
    let adminToken: string;
    let viewerToken: string;

    const get = (path: string, token = adminToken) =>
      fetch(`${service.gatewayUrl}${path}`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
    const json = async (path: string) => {
      const response = await get(path);
      assert.equal(response.status, 200, `${path}: ${await response.clone().text()}`);
      return response.json();
    };
    const problem = async (path: string, status: number, detail: RegExp, token = adminToken) => {
      const response = await get(path, token);
      assert.equal(response.status, status, `${path}: ${await response.clone().text()}`);
      assert.match(response.headers.get("content-type") ?? "", /^application\/problem\+json/);
      const body = (await response.json()) as { status: number; detail: string };
      assert.equal(body.status, status);
      assert.match(body.detail, detail);
    };

    before(async () => {
      issuer = await startTestIssuer();
      store = await createTestStore(kind);
      service = await startTestService(store, { issuer: issuer.issuer }, (handle) =>
        loadPortalFixture(handle.db),
      );
      adminToken = await issuer.sign({ sub: "alice", roles: ["admin"], applications: [] });
      viewerToken = await issuer.sign({ sub: "bob", roles: ["viewer"], applications: ["twins"] });
    });
    after(async () => {
      await service?.stop();
      await issuer?.close();
      await store?.drop();
    });

    describe("GET /rest/applications/{name}/packages", () => {
      it("lists the packages of the latest analysis by name, properties in name order", async () => {
        const response = await get("/rest/applications/portal/packages?limit=10");
        assert.equal(response.status, 200);
        assert.match(response.headers.get("content-type") ?? "", /^application\/json/);
        const text = await response.text();
        assert.equal(
          text,
          JSON.stringify([
            churn("1.15.0", "2021-04-01T00:00:00Z"),
            {
              ecosystem: "npm",
              factsPending: false,
              maxSeverity: null,
              name: "quiet-lib",
              releaseDate: { dateTime: "2023-07-01T00:00:00Z", source: null },
              releasesPerYear: 2,
              saferClosestVersion: "1.1.0",
              safestVersion: "1.1.0",
              scope: "unknown",
              sources: [],
              version: "1.1.0",
              vulnerabilities: [],
            },
            {
              ecosystem: "npm",
              factsPending: false,
              maxSeverity: "HIGH",
              name: "unused-vuln",
              releaseDate: { dateTime: "2023-01-01T00:00:00Z", source: null },
              releasesPerYear: 2,
              saferClosestVersion: "1.1.0",
              safestVersion: "1.1.0",
              scope: "unknown",
              sources: [],
              version: "1.0.0",
              vulnerabilities: [PORTAL.cves.unused],
            },
          ]),
        );
      });

      it("answers as of a date, with sorted CVE ids and the most severe severity", async () => {
        const packages = (await json(`/rest/applications/portal/packages?limit=10&${FEBRUARY}`)) as {
          name: string;
          maxSeverity: string | null;
          vulnerabilities: string[];
          saferClosestVersion: string | null;
        }[];
        assert.deepEqual(
          packages.map((p) => p.name),
          ["churn", "org.example:core", "quiet-lib"],
        );
        assert.deepEqual(packages[1], {
          ecosystem: "maven",
          factsPending: false,
          maxSeverity: "CRITICAL",
          name: "org.example:core",
          releaseDate: { dateTime: "2022-01-01T00:00:00Z", source: null },
          releasesPerYear: 2,
          saferClosestVersion: null,
          safestVersion: null,
          scope: "unknown",
          sources: [],
          version: "1.1",
          vulnerabilities: [PORTAL.cves.coreCritical, PORTAL.cves.coreLow],
        });
        assert.equal(packages[2]?.maxSeverity, "MEDIUM");
      });

      it("filters on vulnerable and on a case-insensitive name substring, and pages", async () => {
        const names = async (query: string) =>
          ((await json(`/rest/applications/portal/packages?${query}`)) as { name: string }[]).map(
            (p) => p.name,
          );
        assert.deepEqual(await names(`limit=10&vulnerable=true&${FEBRUARY}`), [
          "org.example:core",
          "quiet-lib",
        ]);
        assert.deepEqual(await names(`limit=10&vulnerable=false&${FEBRUARY}`), ["churn"]);
        assert.deepEqual(await names("limit=10&q=LIB"), ["quiet-lib"]);
        assert.deepEqual(await names(`limit=10&q=Example%3ACore&${FEBRUARY}`), ["org.example:core"]);
        assert.deepEqual(await names("limit=10&q=%25"), [], "% is taken literally");
        assert.deepEqual(await names("limit=10&q=_"), [], "_ is taken literally");
        assert.deepEqual(await names("limit=10&q=-&vulnerable=true"), ["unused-vuln"]);
        assert.deepEqual(await names("limit=2"), ["churn", "quiet-lib"]);
        assert.deepEqual(await names("limit=2&skip=2"), ["unused-vuln"]);
        assert.deepEqual(await names("limit=2&skip=9"), []);
      });

      const bad: [string, string, RegExp][] = [
        ["limit missing", "", /'limit' is required/],
        ["limit too large", "?limit=1001", /from 1 to 1000/],
        ["negative skip", "?limit=5&skip=-1", /'skip'/],
        [
          "vulnerable not a boolean",
          "?limit=5&vulnerable=yes",
          /'vulnerable' must be true or false, got 'yes'/,
        ],
        ["vulnerable repeated", "?limit=5&vulnerable=true&vulnerable=false", /more than once/],
        ["q too long", `?limit=5&q=${"x".repeat(201)}`, /'q' must be at most 200 characters/],
        ["bad date", "?limit=5&date=tomorrow", /ISO 8601/],
        ["q with a NUL byte", "?limit=5&q=a%00", /'q' contains control characters/],
      ];
      for (const [what, query, detail] of bad) {
        it(`400 problem+json: ${what}`, () =>
          problem(`/rest/applications/portal/packages${query}`, 400, detail));
      }

      it("400, never 500, for an application name with a NUL byte", () =>
        problem("/rest/applications/a%00b/packages?limit=5", 400, /must not contain control characters/));

      it("401 without credentials, 403 for an application not granted, 404 unknown or too early", async () => {
        await problem("/rest/applications/portal/packages?limit=5", 401, /Authentication required/, "");
        await problem("/rest/applications/portal/packages?limit=5", 403, /not allowed to read/, viewerToken);
        assert.equal((await get("/rest/applications/twins/packages?limit=5", viewerToken)).status, 200);
        await problem("/rest/applications/nope/packages?limit=5", 404, /No application named 'nope'/);
        await problem(
          "/rest/applications/portal/packages?limit=5&date=2023-01-01T00:00:00Z",
          404,
          /no analysis at or before 2023-01-01T00:00:00.000Z/,
        );
      });
    });

    describe("GET /rest/applications/{name}/interactions", () => {
      it("lists references to the package's objects, ordered by target then source", async () => {
        const body = await json(
          `/rest/applications/portal/interactions?package=org.example:core&${FEBRUARY}`,
        );
        assert.deepEqual(body, [
          { source: jsCaller("admin"), target: coreObject("Util", "class"), version: "1.1" },
          { source: jsCaller("admin"), target: coreObject("halt", "method"), version: "1.1" },
          { source: jsCaller("admin"), target: coreObject("run", "method"), version: "1.1" },
          { source: jsCaller("main"), target: coreObject("run", "method"), version: "1.1" },
        ]);
      });

      it("serializes properties in name order and pages with limit and skip", async () => {
        const text = await (await get("/rest/applications/portal/interactions?package=churn&limit=1")).text();
        assert.equal(
          text,
          '[{"source":{"fullName":"portal.app.main","id":"app/main","name":"main","type":"JavaScript Function","typeId":"JS_FUNCTION"},' +
            '"target":{"fullName":"churn.spin","id":"churn/spin","mangling":"spin()","name":"spin","type":"JavaScript Function","typeId":"JS_FUNCTION"},"version":"1.15.0"}]',
        );
        const second = (await json(
          "/rest/applications/portal/interactions?package=churn&limit=1&skip=1",
        )) as {
          target: { id: string };
          source: { id: string };
        }[];
        assert.deepEqual(
          second.map((i) => [i.source.id, i.target.id]),
          [["app/admin", "churn/stop"]],
        );
        const all = (await json("/rest/applications/portal/interactions?package=churn")) as unknown[];
        assert.equal(all.length, 2, "limit defaults to 100");
      });

      it("asks for the ecosystem only when the name is ambiguous", async () => {
        await problem(
          "/rest/applications/twins/interactions?package=twin",
          400,
          /several ecosystems.*'ecosystem'/,
        );
        const maven = (await json("/rest/applications/twins/interactions?package=twin&ecosystem=maven")) as {
          target: { id: string };
        }[];
        assert.deepEqual(
          maven.map((i) => i.target.id),
          ["java"],
        );
        const npm = (await json("/rest/applications/twins/interactions?package=twin&ecosystem=npm")) as {
          target: { id: string };
        }[];
        assert.deepEqual(
          npm.map((i) => i.target.id),
          ["js"],
        );
      });

      it("404 when the application does not use the package in the selected analysis", async () => {
        await problem(
          "/rest/applications/portal/interactions?package=org.example:core",
          404,
          /does not use package 'org.example:core' in its analysis of 2024-03-01T00:00:00Z/,
        );
        await problem(
          `/rest/applications/portal/interactions?package=churn&ecosystem=maven&${FEBRUARY}`,
          404,
          /does not use maven package 'churn'/,
        );
        await problem("/rest/applications/portal/interactions?package=left-pad", 404, /does not use/);
        await problem("/rest/applications/nope/interactions?package=churn", 404, /No application named/);
      });

      const bad: [string, string, RegExp][] = [
        ["package missing", "", /'package' is required/],
        ["package empty", "?package=", /'package' is required/],
        ["package repeated", "?package=a&package=b", /more than once/],
        ["package with a NUL byte", "?package=a%00", /'package' contains control characters/],
        [
          "unknown ecosystem",
          "?package=churn&ecosystem=pypi",
          /'ecosystem' must be npm or maven, got 'pypi'/,
        ],
        ["limit zero", "?package=churn&limit=0", /'limit' must be an integer from 1 to 1000/],
        ["bad date", "?package=churn&date=2024-13-01T00:00:00Z", /ISO 8601/],
      ];
      for (const [what, query, detail] of bad) {
        it(`400 problem+json: ${what}`, () =>
          problem(`/rest/applications/portal/interactions${query}`, 400, detail));
      }

      it("403 for an application not granted", () =>
        problem("/rest/applications/portal/interactions?package=churn", 403, /not allowed/, viewerToken));
    });

    describe("GET /rest/applications/{name}/objects", () => {
      it("finds referred external objects by name, fullName, mangling or type, any case", async () => {
        const body = await json(`/rest/applications/portal/objects?q=UTIL&${FEBRUARY}`);
        assert.deepEqual(body, [
          { ...coreObject("Util", "class"), package: "org.example:core", version: "1.1" },
          { ...coreObject("halt", "method"), package: "org.example:core", version: "1.1" },
          { ...coreObject("run", "method"), package: "org.example:core", version: "1.1" },
        ]);
        const text = await (await get("/rest/applications/portal/objects?q=spin")).text();
        assert.equal(
          text,
          '[{"fullName":"churn.spin","id":"churn/spin","mangling":"spin()","name":"spin","package":"churn","type":"JavaScript Function","typeId":"JS_FUNCTION","version":"1.15.0"}]',
        );
        const ids = async (query: string) =>
          ((await json(`/rest/applications/portal/objects?${query}`)) as { id: string }[]).map((o) => o.id);
        assert.deepEqual(
          await ids(`q=java%20method&${FEBRUARY}`),
          ["core/Util.halt", "core/Util.run"],
          "by type",
        );
        assert.deepEqual(await ids(`q=halt()&${FEBRUARY}`), ["core/Util.halt"], "by mangling");
        assert.deepEqual(await ids(`q=util&type=JV_CLASS&${FEBRUARY}`), ["core/Util"], "exact typeId");
        assert.deepEqual(await ids(`q=util&type=jv_class&${FEBRUARY}`), [], "typeId is exact");
        assert.deepEqual(await ids("q=util"), [], "no longer used in March");
        assert.deepEqual(await ids("q=never"), [], "objects nobody refers to are left out");
        assert.deepEqual(await ids("q=_"), [], "LIKE wildcards are taken literally");
        assert.deepEqual(await ids("q=."), ["churn/spin", "churn/stop", "quiet/hush"]);
        assert.deepEqual(await ids("q=.&limit=1&skip=1"), ["churn/stop"]);
      });

      const bad: [string, string, RegExp][] = [
        ["q missing", "", /'q' is required/],
        ["q empty", "?q=", /'q' is required/],
        ["q too long", `?q=${"a".repeat(201)}`, /'q' must be at most 200 characters, got 201/],
        ["type too long", `?q=a&type=${"T".repeat(201)}`, /'type' must be at most 200/],
        ["limit not a number", "?q=a&limit=all", /got 'all'/],
        ["q with a NUL byte", "?q=%00", /'q' contains control characters/],
        ["type with a control character", "?q=a&type=JS%0A", /'type' contains control characters/],
      ];
      for (const [what, query, detail] of bad) {
        it(`400 problem+json: ${what}`, () =>
          problem(`/rest/applications/portal/objects${query}`, 400, detail));
      }

      it("403 and 404 as for every application resource", async () => {
        await problem("/rest/applications/portal/objects?q=a", 403, /not allowed/, viewerToken);
        await problem("/rest/applications/nope/objects?q=a", 404, /No application named/);
      });
    });

    it("documents the three operations in OpenAPI", async () => {
      const doc = (await (await get("/rest/openapi.json", "")).json()) as {
        paths: Record<string, { get?: { parameters?: { name: string; required?: boolean }[] } }>;
      };
      const required = (path: string) =>
        (doc.paths[path]?.get?.parameters ?? []).filter((p) => p.required).map((p) => p.name);
      assert.deepEqual(required("/rest/applications/{name}/packages").sort(), ["limit", "name"]);
      assert.deepEqual(required("/rest/applications/{name}/interactions").sort(), ["name", "package"]);
      assert.deepEqual(required("/rest/applications/{name}/objects").sort(), ["name", "q"]);
    });
  });
}
