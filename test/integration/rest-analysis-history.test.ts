import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { RunningService } from "../../src/service.ts";
import { loadPortalFixture } from "../support/fixture.ts";
import { startTestService } from "../support/service.ts";
import { createTestStore, STORE_KINDS, type TestStore } from "../support/stores.ts";
import { startTestIssuer, type TestIssuer } from "../support/test-issuer.ts";

const none = { CRITICAL: 0, HIGH: 0, LOW: 0, MEDIUM: 0, UNKNOWN: 0 };

for (const kind of STORE_KINDS) {
  describe(`GET /rest/applications/{name}/analyses on ${kind}`, () => {
    let store: TestStore;
    let issuer: TestIssuer;
    let service: RunningService;
    let viewerToken: string;

    const get = (path: string, token = viewerToken) =>
      fetch(`${service.gatewayUrl}${path}`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
    const expectProblem = async (response: Promise<Response>, status: number, detail: RegExp) => {
      const r = await response;
      assert.equal(r.status, status, await r.clone().text());
      assert.match(r.headers.get("content-type") ?? "", /^application\/problem\+json/);
      assert.match(((await r.json()) as { detail: string }).detail, detail);
    };

    before(async () => {
      issuer = await startTestIssuer();
      store = await createTestStore(kind);
      service = await startTestService(store, { issuer: issuer.issuer }, (handle) =>
        loadPortalFixture(handle.db),
      );
      viewerToken = await issuer.sign({ sub: "bob", roles: ["viewer"], applications: ["portal"] });
    });
    after(async () => {
      await service?.stop();
      await issuer?.close();
      await store?.drop();
    });

    it("gives each analysis, oldest first, with its counts and vulnerable packages by worst severity", async () => {
      const response = await get("/rest/applications/portal/analyses");
      assert.equal(response.status, 200, await response.clone().text());
      const history = (await response.json()) as {
        analysis: { dateTime: string };
        counts: { packages: number; vulnerablePackages: number; references: number };
        vulnerablePackagesBySeverity: Record<string, number>;
      }[];
      // January: quiet-lib 1.0.0 (MEDIUM), unused-vuln 1.0.0 (HIGH); February: quiet-lib (MEDIUM) and
      // org.example:core 1.1 (CRITICAL and LOW: counted once, as CRITICAL); March: unused-vuln (HIGH).
      assert.deepEqual(
        history.map((h) => [h.analysis.dateTime, h.vulnerablePackagesBySeverity]),
        [
          ["2024-01-01T00:00:00Z", { ...none, HIGH: 1, MEDIUM: 1 }],
          ["2024-02-01T00:00:00Z", { ...none, CRITICAL: 1, MEDIUM: 1 }],
          ["2024-03-01T00:00:00Z", { ...none, HIGH: 1 }],
        ],
      );
      assert.deepEqual(
        history.map((h) => [h.counts.packages, h.counts.vulnerablePackages, h.counts.references]),
        [
          [3, 2, 2],
          [3, 2, 6],
          [3, 1, 3],
        ],
      );
      // The last entry's counts are those of the application resource (its latest analysis).
      const detail = (await (await get("/rest/applications/portal")).json()) as { counts: object };
      assert.deepEqual(history.at(-1)?.counts, detail.counts);
    });

    it("pages", async () => {
      const page = (await (await get("/rest/applications/portal/analyses?limit=1&skip=1")).json()) as {
        analysis: { dateTime: string };
      }[];
      assert.deepEqual(
        page.map((h) => h.analysis.dateTime),
        ["2024-02-01T00:00:00Z"],
      );
    });

    it("400 for bad paging, 401, 403 for an application not granted, 404 for an unknown one", async () => {
      await expectProblem(get("/rest/applications/portal/analyses?limit=0"), 400, /'limit'/);
      await expectProblem(get("/rest/applications/portal/analyses", ""), 401, /Authentication required/);
      await expectProblem(
        get("/rest/applications/twins/analyses"),
        403,
        /not allowed to read application 'twins'/,
      );
      await expectProblem(get("/rest/applications/nope/analyses"), 404, /No application named 'nope'/);
    });
  });
}
