import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { RunningService } from "../../src/service.ts";
import { loadPortalFixture, PORTAL } from "../support/fixture.ts";
import { startTestService } from "../support/service.ts";
import { createTestStore, STORE_KINDS, type TestStore } from "../support/stores.ts";
import { startTestIssuer, type TestIssuer } from "../support/test-issuer.ts";

const RULE_IDS = ["max-releases-behind-safest", "no-referenced-severe-cve", "no-unfixable-vulnerability"];

const coreObjects = [
  {
    fullName: "org.example.core.Util",
    id: "core/Util",
    mangling: "",
    name: "Util",
    type: "Java Class",
    typeId: "JV_CLASS",
  },
  {
    fullName: "org.example.core.Util.halt",
    id: "core/Util.halt",
    mangling: "halt()",
    name: "halt",
    type: "Java Method",
    typeId: "JV_METHOD",
  },
  {
    fullName: "org.example.core.Util.run",
    id: "core/Util.run",
    mangling: "run()",
    name: "run",
    type: "Java Method",
    typeId: "JV_METHOD",
  },
];

interface Evaluation {
  analysis: { dateTime: string };
  application: string;
  rules: {
    findings: Record<string, unknown>[];
    findingsTotal: number;
    id: string;
    name: string;
    passed: boolean;
  }[];
  verdict: string;
}

for (const kind of STORE_KINDS) {
  describe(`REST quality gates and comparison on ${kind}`, () => {
    let store: TestStore;
    let issuer: TestIssuer;
    let service: RunningService;
    let adminToken: string;
    let viewerToken: string;

    const headers = (token: string): Record<string, string> =>
      token ? { authorization: `Bearer ${token}` } : {};
    const get = (path: string, token = adminToken) =>
      fetch(`${service.gatewayUrl}${path}`, { headers: headers(token) });
    /** Raw text bodies go straight to the REST listener: the gateway has its own body parser. */
    const put = (path: string, body: unknown, token = adminToken) =>
      fetch(`${typeof body === "string" ? service.restUrl : service.gatewayUrl}${path}`, {
        method: "PUT",
        headers: { ...headers(token), "content-type": "application/json" },
        body: typeof body === "string" ? body : JSON.stringify(body),
      });
    const json = async (response: Response | Promise<Response>) => {
      const r = await response;
      assert.equal(r.status, 200, await r.clone().text());
      return r.json();
    };
    const expectProblem = async (response: Response | Promise<Response>, status: number, detail: RegExp) => {
      const r = await response;
      assert.equal(r.status, status, await r.clone().text());
      assert.match(r.headers.get("content-type") ?? "", /^application\/problem\+json/);
      const body = (await r.json()) as { status: number; detail: string };
      assert.equal(body.status, status);
      assert.match(body.detail, detail);
    };
    const evaluation = async (query = "") =>
      (await json(get(`/rest/applications/portal/gates/evaluation${query}`))) as Evaluation;
    // Every rule on, as an administrator who wants them all sets it (the releases rule is off by default).
    const enableAllRules = async () => {
      await json(
        put("/rest/gates/no-referenced-severe-cve", { enabled: true, parameters: { minSeverity: "HIGH" } }),
      );
      await json(
        put("/rest/gates/max-releases-behind-safest", { enabled: true, parameters: { maxReleases: 10 } }),
      );
      await json(put("/rest/gates/no-unfixable-vulnerability", { enabled: true }));
    };

    before(async () => {
      issuer = await startTestIssuer();
      store = await createTestStore(kind);
      service = await startTestService(store, { issuer: issuer.issuer }, (handle) =>
        loadPortalFixture(handle.db),
      );
      adminToken = await issuer.sign({ sub: "alice", roles: ["admin"], applications: [] });
      viewerToken = await issuer.sign({ sub: "bob", roles: ["viewer"], applications: ["portal"] });
    });
    after(async () => {
      await service?.stop();
      await issuer?.close();
      await store?.drop();
    });

    describe("GET /rest/gates", () => {
      it("lists the default rules ordered by id, to any authenticated caller", async () => {
        const response = await get("/rest/gates", viewerToken);
        assert.equal(response.status, 200);
        const text = await response.text();
        const rules = JSON.parse(text) as {
          id: string;
          kind: string;
          enabled: boolean;
          parameters: object;
        }[];
        assert.deepEqual(
          rules.map((r) => r.id),
          RULE_IDS,
        );
        assert.deepEqual(
          rules.map((r) => [r.kind, r.enabled, r.parameters]),
          [
            // Every kind counts the packages a production install keeps unless told otherwise.
            // Off out of the box: a count of releases failed 31 of the corpus's 33 real applications.
            ["max-releases-behind-safest", false, { maxReleases: 10, packages: "production" }],
            ["no-referenced-severe-cve", true, { minSeverity: "HIGH", packages: "production" }],
            ["no-unfixable-vulnerability", true, { packages: "production" }],
          ],
        );
        assert.match(
          text,
          /^\[\{"description":"[^"]+","enabled":false,"id":"max-releases-behind-safest","kind":/,
        );
      });

      it("by default checks the two vulnerability rules only: January's stale package passes", async () => {
        const january = await evaluation("?date=2024-01-15T00:00:00Z");
        assert.deepEqual(
          january.rules.map((r) => [r.id, r.passed]),
          [
            ["no-referenced-severe-cve", true],
            ["no-unfixable-vulnerability", true],
          ],
        );
        assert.equal(january.verdict, "pass");
      });

      it("401 without credentials", async () => {
        await expectProblem(get("/rest/gates", ""), 401, /Authentication required/);
      });
    });

    describe("GET /rest/applications/{name}/gates/evaluation", () => {
      before(enableAllRules);

      it("passes the latest analysis: every enabled rule without findings", async () => {
        assert.deepEqual(await evaluation(), {
          analysis: { dateTime: "2024-03-01T00:00:00Z" },
          application: "portal",
          rules: [
            {
              findings: [],
              findingsTotal: 0,
              id: "max-releases-behind-safest",
              name: "Not too far behind the safest version",
              passed: true,
            },
            {
              findings: [],
              findingsTotal: 0,
              id: "no-referenced-severe-cve",
              name: "No severe CVE in a referenced package",
              passed: true,
            },
            {
              findings: [],
              findingsTotal: 0,
              id: "no-unfixable-vulnerability",
              name: "No vulnerability without a fix",
              passed: true,
            },
          ],
          verdict: "pass",
        });
      });

      it("fails February on a referenced unfixable CRITICAL CVE, with the referred objects", async () => {
        const response = await get("/rest/applications/portal/gates/evaluation?date=2024-02-15T00:00:00Z");
        const text = await response.text();
        const result = JSON.parse(text) as Evaluation;
        assert.equal(result.analysis.dateTime, "2024-02-01T00:00:00Z");
        assert.equal(result.verdict, "fail");
        assert.deepEqual(
          result.rules.map((r) => [r.id, r.passed]),
          [
            ["max-releases-behind-safest", true],
            ["no-referenced-severe-cve", false],
            ["no-unfixable-vulnerability", false],
          ],
        );
        assert.deepEqual(result.rules[1]?.findings, [
          {
            cve: PORTAL.cves.coreCritical,
            detail:
              "CVE-2099-3001 (CRITICAL) affects org.example:core 1.1, whose objects the application refers to.",
            objects: coreObjects,
            package: "org.example:core",
            severity: "CRITICAL",
            version: "1.1",
          },
        ]);
        assert.deepEqual(result.rules[2]?.findings, [
          {
            detail:
              "org.example:core 1.1 is affected by CVE-2099-3001, CVE-2099-3002 and no upgrade is free of known vulnerabilities.",
            package: "org.example:core",
            severity: "CRITICAL",
            version: "1.1",
          },
        ]);
        assert.ok(
          text.includes('{"cve":"CVE-2099-3001","detail":"CVE-2099-3001 (CRITICAL) affects'),
          "finding properties in name order",
        );
        // Findings are paged per rule (limit, skip); the totals and the verdict stay those of the analysis.
        assert.deepEqual(
          result.rules.map((r) => r.findingsTotal),
          [0, 1, 1],
        );
        const past = await evaluation("?date=2024-02-15T00:00:00Z&limit=1&skip=1");
        assert.equal(past.verdict, "fail");
        assert.deepEqual(
          past.rules.map((r) => [r.id, r.passed, r.findings.length, r.findingsTotal]),
          [
            ["max-releases-behind-safest", true, 0, 0],
            ["no-referenced-severe-cve", false, 0, 1],
            ["no-unfixable-vulnerability", false, 0, 1],
          ],
        );
        await expectProblem(
          get("/rest/applications/portal/gates/evaluation?limit=1001"),
          400,
          /'limit' must be an integer from 1 to 1000/,
        );
      });

      it("fails January on a package 15 releases behind its safest version (pre-releases not counted)", async () => {
        const result = await evaluation("?date=2024-01-15T00:00:00Z");
        assert.equal(result.verdict, "fail");
        assert.deepEqual(result.rules[0]?.findings, [
          {
            detail: "churn 1.0.0 is 15 releases behind its safest version 1.15.0, more than the 10 allowed.",
            package: "churn",
            version: "1.0.0",
          },
        ]);
        assert.deepEqual(result.rules[1]?.findings, [], "the HIGH CVE is in a package nobody refers to");
      });

      it("400 for a bad date; 403, 404 as for every application resource", async () => {
        await expectProblem(get("/rest/applications/portal/gates/evaluation?date=soon"), 400, /ISO 8601/);
        await expectProblem(get("/rest/applications/nope/gates/evaluation"), 404, /No application named/);
        await expectProblem(
          get("/rest/applications/portal/gates/evaluation?date=2020-01-01T00:00:00Z"),
          404,
          /no analysis at or before/,
        );
        const outsider = await issuer.sign({ sub: "eve", roles: ["viewer"], applications: ["other"] });
        await expectProblem(get("/rest/applications/portal/gates/evaluation", outsider), 403, /not allowed/);
        assert.equal((await get("/rest/applications/portal/gates/evaluation", viewerToken)).status, 200);
      });
    });

    describe("GET /rest/applications/{name}/gates/history", () => {
      it("gives one verdict per analysis, newest first, and pages", async () => {
        const history = await json(get("/rest/applications/portal/gates/history", viewerToken));
        assert.deepEqual(history, [
          { analysis: { dateTime: "2024-03-01T00:00:00Z" }, failedRules: [], verdict: "pass" },
          {
            analysis: { dateTime: "2024-02-01T00:00:00Z" },
            failedRules: ["no-referenced-severe-cve", "no-unfixable-vulnerability"],
            verdict: "fail",
          },
          {
            analysis: { dateTime: "2024-01-01T00:00:00Z" },
            failedRules: ["max-releases-behind-safest"],
            verdict: "fail",
          },
        ]);
        const page = (await json(get("/rest/applications/portal/gates/history?limit=1&skip=1"))) as {
          analysis: { dateTime: string };
        }[];
        assert.deepEqual(
          page.map((e) => e.analysis.dateTime),
          ["2024-02-01T00:00:00Z"],
        );
        assert.deepEqual(await json(get("/rest/applications/portal/gates/history?limit=5&skip=3")), []);
      });

      it("400 for bad paging; 403 and 404", async () => {
        await expectProblem(get("/rest/applications/portal/gates/history?limit=0"), 400, /'limit'/);
        await expectProblem(get("/rest/applications/portal/gates/history?skip=x"), 400, /'skip'/);
        await expectProblem(get("/rest/applications/nope/gates/history"), 404, /No application named/);
        const outsider = await issuer.sign({ sub: "eve", roles: ["viewer"], applications: [] });
        await expectProblem(get("/rest/applications/portal/gates/history", outsider), 403, /not allowed/);
      });
    });

    describe("PUT /rest/gates/{id}", () => {
      after(enableAllRules);

      it("changes parameters (merged, normalized) and the evaluations follow", async () => {
        const updated = await json(
          put("/rest/gates/no-referenced-severe-cve", { parameters: { minSeverity: "medium" } }),
        );
        assert.deepEqual(updated, {
          description: (updated as { description: string }).description,
          enabled: true,
          id: "no-referenced-severe-cve",
          kind: "no-referenced-severe-cve",
          name: "No severe CVE in a referenced package",
          parameters: { minSeverity: "MEDIUM", packages: "production" },
        });
        const january = await evaluation("?date=2024-01-15T00:00:00Z");
        assert.deepEqual(
          january.rules[1]?.findings.map((f) => [f.cve, f.package, f.severity]),
          [[PORTAL.cves.quiet, "quiet-lib", "MEDIUM"]],
        );
        await json(put("/rest/gates/max-releases-behind-safest", { parameters: { maxReleases: 15 } }));
        const relaxed = await evaluation("?date=2024-01-15T00:00:00Z");
        assert.equal(relaxed.rules[0]?.passed, true, "15 behind is allowed with maxReleases 15");
        const listed = (await json(get("/rest/gates"))) as { id: string; parameters: object }[];
        assert.deepEqual(
          listed.map((r) => r.parameters),
          [
            { maxReleases: 15, packages: "production" },
            { minSeverity: "MEDIUM", packages: "production" },
            { packages: "production" },
          ],
        );
      });

      it("disables a rule: it no longer counts in evaluations nor history", async () => {
        const updated = (await json(put("/rest/gates/no-unfixable-vulnerability", { enabled: false }))) as {
          enabled: boolean;
        };
        assert.equal(updated.enabled, false);
        await json(put("/rest/gates/no-referenced-severe-cve", { enabled: false }));
        const february = await evaluation("?date=2024-02-15T00:00:00Z");
        assert.deepEqual(
          february.rules.map((r) => r.id),
          ["max-releases-behind-safest"],
        );
        assert.equal(february.verdict, "pass");
        const history = (await json(get("/rest/applications/portal/gates/history"))) as { verdict: string }[];
        assert.deepEqual(
          history.map((h) => h.verdict),
          ["pass", "pass", "pass"],
        );
        await enableAllRules();
        assert.equal((await evaluation("?date=2024-02-15T00:00:00Z")).verdict, "fail");
      });

      const refused: [string, string, unknown, RegExp][] = [
        [
          "an unknown parameter",
          "no-referenced-severe-cve",
          { parameters: { severity: "HIGH" } },
          /Unknown parameter 'severity'.*'minSeverity'/,
        ],
        [
          "an unknown parameter of a kind with only 'packages'",
          "no-unfixable-vulnerability",
          { parameters: { x: 1 } },
          /Unknown parameter 'x' for rules of kind 'no-unfixable-vulnerability': expected 'packages'/,
        ],
        [
          "a packages value that is no choice",
          "no-unfixable-vulnerability",
          { parameters: { packages: "dev" } },
          /'packages' must be .*"production", "all".*got "dev"/,
        ],
        [
          "a severity of the wrong type",
          "no-referenced-severe-cve",
          { parameters: { minSeverity: 3 } },
          /'minSeverity' must be a string, one of CRITICAL, HIGH, MEDIUM, LOW, got 3/,
        ],
        [
          "an unknown severity",
          "no-referenced-severe-cve",
          { parameters: { minSeverity: "SEVERE" } },
          /'minSeverity' must be .* got "SEVERE"/,
        ],
        [
          "a count given as text",
          "max-releases-behind-safest",
          { parameters: { maxReleases: "10" } },
          /'maxReleases' must be an integer from 0 to 100000, got "10"/,
        ],
        [
          "a negative count",
          "max-releases-behind-safest",
          { parameters: { maxReleases: -1 } },
          /'maxReleases' must be an integer/,
        ],
        ["a fractional count", "max-releases-behind-safest", { parameters: { maxReleases: 2.5 } }, /got 2.5/],
        [
          "enabled not a boolean",
          "no-unfixable-vulnerability",
          { enabled: "yes" },
          /'enabled' must be a boolean.*got "yes"/,
        ],
        [
          "parameters not an object",
          "no-unfixable-vulnerability",
          { parameters: [1] },
          /'parameters' must be a JSON object, got an array/,
        ],
        [
          "an unknown top-level key",
          "no-unfixable-vulnerability",
          { enabled: true, kind: "x" },
          /Unknown property 'kind'/,
        ],
        ["an empty object", "no-unfixable-vulnerability", {}, /must set 'enabled', 'parameters' or both/],
        ["a JSON array body", "no-unfixable-vulnerability", [], /must be a JSON object/],
        ["a JSON string body", "no-unfixable-vulnerability", '"enabled"', /must be a JSON object/],
      ];
      for (const [what, id, body, detail] of refused) {
        it(`400 problem+json for ${what}, the rule unchanged`, async () => {
          const before = await (await get("/rest/gates")).text();
          await expectProblem(put(`/rest/gates/${id}`, body), 400, detail);
          assert.equal(await (await get("/rest/gates")).text(), before);
        });
      }

      it("409 problem+json for the parameters of another rule kind, the rule unchanged", async () => {
        const before = await (await get("/rest/gates")).text();
        await expectProblem(
          put("/rest/gates/no-referenced-severe-cve", { parameters: { maxReleases: 3 } }),
          409,
          /Unknown parameter 'maxReleases' for rules of kind 'no-referenced-severe-cve': expected 'minSeverity', 'packages'/,
        );
        await expectProblem(
          put("/rest/gates/no-unfixable-vulnerability", { parameters: { minSeverity: "LOW" } }),
          409,
          /Unknown parameter 'minSeverity' for rules of kind 'no-unfixable-vulnerability': expected 'packages'/,
        );
        assert.equal(await (await get("/rest/gates")).text(), before);
      });

      it("400 for malformed JSON and for a malformed rule id", async () => {
        await expectProblem(put("/rest/gates/no-unfixable-vulnerability", "{bad"), 400, /JSON/);
        await expectProblem(put("/rest/gates/Not%20An%20Id", { enabled: true }), 400, /not a gate rule id/);
      });

      it("404 for an unknown rule id", async () => {
        await expectProblem(
          put("/rest/gates/no-such-rule", { enabled: true }),
          404,
          /No quality gate rule with id 'no-such-rule'/,
        );
      });

      it("403 for a viewer, even with a valid body; 401 without credentials", async () => {
        const before = await (await get("/rest/gates")).text();
        await expectProblem(
          put("/rest/gates/no-unfixable-vulnerability", { enabled: false }, viewerToken),
          403,
          /Only administrators may change quality gate rules/,
        );
        await expectProblem(
          put("/rest/gates/no-unfixable-vulnerability", "{bad", viewerToken),
          403,
          /administrators/,
        );
        await expectProblem(
          put("/rest/gates/no-unfixable-vulnerability", { enabled: false }, ""),
          401,
          /Authentication/,
        );
        assert.equal(await (await get("/rest/gates")).text(), before);
      });
    });

    describe("GET /rest/applications/{name}/compare", () => {
      it("compares January with the latest analysis; uses of an upgraded package move to its new version", async () => {
        const response = await get("/rest/applications/portal/compare?from=2024-01-15T00:00:00Z");
        const text = await response.text();
        assert.equal(response.status, 200, text);
        assert.equal(
          text,
          JSON.stringify({
            from: { dateTime: "2024-01-01T00:00:00Z" },
            packages: {
              added: [
                { name: "churn", version: "1.15.0" },
                { name: "quiet-lib", version: "1.1.0" },
              ],
              addedTotal: 2,
              removed: [
                { name: "churn", version: "1.0.0" },
                { name: "quiet-lib", version: "1.0.0" },
              ],
              removedTotal: 2,
            },
            // A reference is to an object of one version: churn 1.0.0 → 1.15.0 and quiet-lib 1.0.0 (removed
            // in February) → 1.1.0 (added in March) move the same uses from the old version to the new.
            references: {
              added: [
                {
                  source: { fullName: "portal.app.main", id: "app/main" },
                  target: { fullName: "churn.spin", id: "churn/spin", package: "churn", version: "1.15.0" },
                },
                {
                  source: { fullName: "portal.app.admin", id: "app/admin" },
                  target: { fullName: "churn.stop", id: "churn/stop", package: "churn", version: "1.15.0" },
                },
                {
                  source: { fullName: "portal.app.main", id: "app/main" },
                  target: {
                    fullName: "quiet.hush",
                    id: "quiet/hush",
                    package: "quiet-lib",
                    version: "1.1.0",
                  },
                },
              ],
              addedTotal: 3,
              removed: [
                {
                  source: { fullName: "portal.app.main", id: "app/main" },
                  target: { fullName: "churn.spin", id: "churn/spin", package: "churn", version: "1.0.0" },
                },
                {
                  source: { fullName: "portal.app.main", id: "app/main" },
                  target: {
                    fullName: "quiet.hush",
                    id: "quiet/hush",
                    package: "quiet-lib",
                    version: "1.0.0",
                  },
                },
              ],
              removedTotal: 2,
            },
            to: { dateTime: "2024-03-01T00:00:00Z" },
            vulnerablePackages: {
              added: [],
              addedTotal: 0,
              removed: [{ name: "quiet-lib", version: "1.0.0", vulnerabilities: [PORTAL.cves.quiet] }],
              removedTotal: 1,
            },
          }),
        );
      });

      it("compares two dates, and the reverse swaps added and removed", async () => {
        const forward = (await json(
          get("/rest/applications/portal/compare?from=2024-01-15T00:00:00Z&to=2024-02-15T00:00:00Z"),
        )) as {
          packages: { added: unknown[]; removed: unknown[] };
          references: {
            added: { source: { id: string }; target: { id: string; version: string } }[];
            removed: { source: { id: string }; target: { id: string; version: string } }[];
          };
          vulnerablePackages: { added: unknown[]; removed: unknown[] };
        };
        assert.deepEqual(forward.packages, {
          added: [
            { name: "churn", version: "1.15.0" },
            { name: "org.example:core", version: "1.1" },
          ],
          addedTotal: 2,
          removed: [
            { name: "churn", version: "1.0.0" },
            { name: "unused-vuln", version: "1.0.0" },
          ],
          removedTotal: 2,
        });
        assert.deepEqual(
          forward.references.added.map((r) => [r.target.id, r.target.version, r.source.id]),
          [
            ["churn/spin", "1.15.0", "app/main"],
            ["core/Util", "1.1", "app/admin"],
            ["core/Util.halt", "1.1", "app/admin"],
            ["core/Util.run", "1.1", "app/admin"],
            ["core/Util.run", "1.1", "app/main"],
          ],
        );
        assert.deepEqual(
          forward.references.removed.map((r) => [r.target.id, r.target.version, r.source.id]),
          [["churn/spin", "1.0.0", "app/main"]],
        );
        assert.deepEqual(forward.vulnerablePackages, {
          added: [
            {
              name: "org.example:core",
              version: "1.1",
              vulnerabilities: [PORTAL.cves.coreCritical, PORTAL.cves.coreLow],
            },
          ],
          addedTotal: 1,
          removed: [{ name: "unused-vuln", version: "1.0.0", vulnerabilities: [PORTAL.cves.unused] }],
          removedTotal: 1,
        });
        const backward = (await json(
          get("/rest/applications/portal/compare?from=2024-02-15T00:00:00Z&to=2024-01-15T00:00:00Z"),
        )) as typeof forward & { from: { dateTime: string } };
        assert.equal(backward.from.dateTime, "2024-02-01T00:00:00Z");
        assert.deepEqual(backward.packages.added, forward.packages.removed);
        assert.deepEqual(backward.references.removed, forward.references.added);
        assert.deepEqual(backward.vulnerablePackages.removed, forward.vulnerablePackages.added);
      });

      it("finds nothing between an analysis and itself", async () => {
        const same = (await json(
          get("/rest/applications/portal/compare?from=2024-02-01T00:00:00Z&to=2024-02-20T00:00:00Z"),
        )) as Record<string, { added: unknown[]; removed: unknown[] }>;
        for (const key of ["packages", "references", "vulnerablePackages"]) {
          assert.deepEqual(same[key], { added: [], addedTotal: 0, removed: [], removedTotal: 0 }, key);
        }
      });

      it("pages each list with limit and skip, the totals unchanged", async () => {
        const query = "from=2024-01-15T00:00:00Z&to=2024-02-15T00:00:00Z";
        type Page = {
          packages: { added: { name: string }[]; addedTotal: number; removedTotal: number };
          references: { added: { source: { id: string }; target: { id: string } }[]; addedTotal: number };
        };
        const page = (await json(get(`/rest/applications/portal/compare?${query}&limit=2&skip=1`))) as Page;
        assert.deepEqual(
          page.references.added.map((r) => [r.target.id, r.source.id]),
          [
            ["core/Util", "app/admin"],
            ["core/Util.halt", "app/admin"],
          ],
        );
        assert.equal(page.references.addedTotal, 5);
        assert.deepEqual(
          page.packages.added.map((p) => p.name),
          ["org.example:core"],
        );
        assert.equal(page.packages.addedTotal, 2);
        const past = (await json(get(`/rest/applications/portal/compare?${query}&skip=10`))) as Page;
        assert.deepEqual(past.references.added, []);
        assert.equal(past.references.addedTotal, 5);
        await expectProblem(
          get(`/rest/applications/portal/compare?${query}&limit=0`),
          400,
          /'limit' must be an integer from 1 to 1000/,
        );
        await expectProblem(
          get(`/rest/applications/portal/compare?${query}&skip=-1`),
          400,
          /'skip' must be a non-negative integer/,
        );
      });

      const bad: [string, string, number, RegExp][] = [
        ["from missing", "", 400, /'from' is required/],
        ["from not a date-time", "?from=2024-01-01", 400, /'from' must be an ISO 8601 date-time/],
        ["to not a date-time", "?from=2024-01-15T00:00:00Z&to=later", 400, /'to' must be an ISO 8601/],
        ["from repeated", "?from=2024-01-15T00:00:00Z&from=2024-02-15T00:00:00Z", 400, /more than once/],
        [
          "from before the first analysis",
          "?from=2020-01-01T00:00:00Z",
          404,
          /no analysis at or before .* \(from\)/,
        ],
        [
          "to before the first analysis",
          "?from=2024-01-15T00:00:00Z&to=2020-01-01T00:00:00Z",
          404,
          /no analysis at or before .* \(to\)/,
        ],
      ];
      for (const [what, query, status, detail] of bad) {
        it(`${status} problem+json: ${what}`, () =>
          expectProblem(get(`/rest/applications/portal/compare${query}`), status, detail));
      }

      it("403 for an application not granted, 404 for an unknown one", async () => {
        const outsider = await issuer.sign({ sub: "eve", roles: ["viewer"], applications: ["twins"] });
        await expectProblem(
          get("/rest/applications/portal/compare?from=2024-01-15T00:00:00Z", outsider),
          403,
          /not allowed/,
        );
        await expectProblem(
          get("/rest/applications/nope/compare?from=2024-01-15T00:00:00Z"),
          404,
          /No application named/,
        );
      });
    });

    it("documents the gate and compare operations in OpenAPI", async () => {
      const doc = (await (await get("/rest/openapi.json", "")).json()) as {
        paths: Record<string, Record<string, { requestBody?: unknown }>>;
      };
      for (const path of [
        "/rest/gates",
        "/rest/applications/{name}/gates/evaluation",
        "/rest/applications/{name}/gates/history",
        "/rest/applications/{name}/compare",
      ]) {
        assert.ok(doc.paths[path]?.get, path);
      }
      assert.ok(doc.paths["/rest/gates/{id}"]?.put?.requestBody, "PUT body documented");
    });
  });
}
