import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import { createApiKey } from "../../src/domain/api-keys.ts";
import { ingestAnalysis } from "../../src/domain/package-facts.ts";
import { DEMO_LABEL, demoLoadPending, loadDemo } from "../../src/scanner/demo/load-demo.ts";
import type { RunningService } from "../../src/service.ts";
import { openStore, type StoreHandle } from "../../src/store/database.ts";
import type { AnalysisInput } from "../../src/store/input-records.ts";
import { startTestService } from "../support/service.ts";
import { createTestStore, STORE_KINDS, type TestStore } from "../support/stores.ts";

interface CvePackage {
  name: string;
  version: string;
  releaseDate: { dateTime: string } | null;
  releasesPerYear: number | null;
  saferClosestVersion: string | null;
  safestVersion: string | null;
  objects: { id: string; name: string; fullName: string; mangling: string; type: string; typeId: string }[];
}

const LOG4J = "org.apache.logging.log4j:log4j-core";

for (const kind of STORE_KINDS) {
  describe(`demo data through the REST API on ${kind}`, () => {
    let store: TestStore;
    let service: RunningService;
    let key: string;
    const get = async <T>(path: string): Promise<T> => {
      const response = await fetch(`${service.gatewayUrl}${path}`, { headers: { "x-api-key": key } });
      assert.equal(response.status, 200, `${path}: ${response.status}`);
      return (await response.json()) as T;
    };

    before(async () => {
      store = await createTestStore(kind);
      service = await startTestService(store, {}, async (handle) => {
        await loadDemo(handle.db);
      });
      key = (await createApiKey(service.store.db, { user: "script", role: "admin", applications: [] })).key;
    });
    after(async () => {
      await service?.stop();
      await store?.drop();
    });

    it("imports its advisories as OSV records, through the advisory import path", async () => {
      const records = await service.store.db
        .selectFrom("advisory_records")
        .select(["id", "withdrawn"])
        .orderBy("id")
        .execute();
      assert.equal(records.length, 14);
      assert.ok(records.every((r) => r.id.startsWith("GHSA-") && r.withdrawn === 0));
      // Loading again finds every record unchanged and changes nothing.
      const again = await loadDemo(service.store.db);
      assert.equal(again.advisories, 14);
      const after = await service.store.db.selectFrom("advisory_records").select("modified").execute();
      assert.equal(after.length, 14);
    });

    it("labels the demo applications as demo data", async () => {
      const apps =
        await get<{ name: string; demo: boolean; description: string; analysisCount: number }[]>(
          "/rest/applications",
        );
      assert.deepEqual(
        apps.map((a) => a.name),
        ["claims-portal", "payments-service", "storefront-web"],
      );
      for (const app of apps) {
        assert.equal(app.demo, true);
        assert.match(app.description, /^Demo data: /);
        assert.ok(app.analysisCount >= 2);
      }
    });

    it("answers the Log4Shell question as of the January 2024 analysis", async () => {
      const body = await get<CvePackage[]>(
        "/rest/applications/payments-service/insights/cve/CVE-2021-44228/occurrences?limit=20&date=2024-02-01T00:00:00Z",
      );
      assert.equal(body.length, 1);
      const [log4j] = body as [CvePackage];
      assert.equal(log4j.name, LOG4J);
      assert.equal(log4j.version, "2.14.1");
      // Real facts: 2.14.1 was signed for Maven Central on 2021-03-07; 2.17.1 is the first release
      // affected by none of the four Log4j CVEs.
      assert.deepEqual(log4j.releaseDate, { dateTime: "2021-03-07T05:12:27Z", source: "signature" });
      assert.equal(log4j.saferClosestVersion, "2.17.1");
      assert.equal(log4j.safestVersion, "2.26.1");
      assert.equal(typeof log4j.releasesPerYear, "number");
      assert.ok(log4j.objects.length >= 10);
      const loggerContext = log4j.objects.find(
        (o) => o.fullName === "org.apache.logging.log4j.core.LoggerContext",
      );
      assert.deepEqual(loggerContext && { ...loggerContext, id: "-" }, {
        fullName: "org.apache.logging.log4j.core.LoggerContext",
        id: "-",
        mangling: "",
        name: "LoggerContext",
        type: "Java Class",
        typeId: "JV_CLASS",
      });
      const methods = log4j.objects.filter((o) => o.typeId === "JV_METHOD");
      assert.ok(
        methods.length > 0 && methods.every((m) => / return /.test(m.mangling)),
        "Java methods carry manglings",
      );
      const order = log4j.objects.map((o) => `${o.fullName}\u0000${o.id}`);
      assert.deepEqual(order, [...order].sort(), "objects ordered by fullName then id");
    });

    it("finds no Log4Shell occurrence after the June 2024 upgrade to 2.17.1", async () => {
      assert.deepEqual(
        await get("/rest/applications/payments-service/insights/cve/CVE-2021-44228/occurrences?limit=20"),
        [],
      );
    });

    it("resolves the GHSA alias of Log4Shell", async () => {
      const byAlias = await get<CvePackage[]>(
        "/rest/applications/payments-service/insights/cve/GHSA-jfh8-c2jp-5v3q/occurrences?limit=20&date=2024-02-01T00:00:00Z",
      );
      assert.equal(byAlias[0]?.name, LOG4J);
    });

    it("lists all four Log4j CVEs among the January analysis' insights", async () => {
      const cves = await get<{ id: string; severity: string }[]>(
        "/rest/applications/payments-service/insights/cve?limit=100&date=2024-01-15T09:00:00Z",
      );
      const ids = cves.map((c) => c.id);
      for (const id of ["CVE-2021-44228", "CVE-2021-45046", "CVE-2021-45105", "CVE-2021-44832"]) {
        assert.ok(ids.includes(id), `${id} listed`);
      }
      assert.equal(cves[0]?.severity, "CRITICAL");
    });

    it("lists the lodash functions storefront-web calls for CVE-2021-23337", async () => {
      const body = await get<CvePackage[]>(
        "/rest/applications/storefront-web/insights/cve/CVE-2021-23337/occurrences?limit=20&date=2024-04-01T00:00:00Z",
      );
      assert.equal(body.length, 1);
      const [lodash] = body as [CvePackage];
      assert.equal(lodash.name, "lodash");
      assert.equal(lodash.version, "4.17.15");
      assert.deepEqual(lodash.releaseDate, { dateTime: "2019-07-19T02:28:46Z", source: "registry" });
      assert.equal(lodash.saferClosestVersion, "4.17.21");
      assert.ok(lodash.objects.some((o) => o.name === "template" && o.typeId === "JS_FUNCTION"));
    });
  });
}

for (const kind of STORE_KINDS) {
  describe(`an interrupted demo load on ${kind}`, () => {
    let store: TestStore;
    let handle: StoreHandle;
    const applications = JSON.parse(
      readFileSync(new URL("../../src/scanner/demo/applications.json", import.meta.url), "utf8"),
    ) as { name: string; description: string; analyses: AnalysisInput[] }[];
    const analysesOf = async (name: string) =>
      (
        await handle.db
          .selectFrom("analyses")
          .innerJoin("applications", "applications.id", "analyses.application_id")
          .select("analyses.analyzed_at")
          .where("applications.name", "=", name)
          .orderBy("analyses.seq")
          .execute()
      ).map((row) => row.analyzed_at);

    before(async () => {
      store = await createTestStore(kind);
      handle = await openStore({ databaseUrl: store.databaseUrl, sqliteFile: store.sqliteFile });
    });
    after(async () => {
      await handle?.close();
      await store?.drop();
    });

    it("is completed by the next load, not left incomplete for good", async () => {
      assert.equal(await demoLoadPending(handle.db), true, "an empty store gets the demo data");
      // What a crash between the two analyses of payments-service left: each analysis is committed on
      // its own, so the application exists, flagged demo, with its first analysis only.
      const payments = applications.find((a) => a.name === "payments-service");
      assert.ok(payments && payments.analyses.length === 2);
      await ingestAnalysis(handle.db, payments.name, payments.analyses[0] as AnalysisInput, {
        description: `${DEMO_LABEL}: ${payments.description}`,
        demo: true,
      });
      assert.deepEqual(await analysesOf("payments-service"), ["2024-01-15T09:00:00.000Z"]);
      assert.equal(await demoLoadPending(handle.db), true, "start --demo completes it too");

      const result = await loadDemo(handle.db);
      assert.deepEqual(
        result.applications.map((a) => [a.name, a.analyses, a.skipped]),
        [
          ["payments-service", 1, false],
          ["storefront-web", 2, false],
          ["claims-portal", 2, false],
        ],
      );
      assert.deepEqual(await analysesOf("payments-service"), [
        "2024-01-15T09:00:00.000Z",
        "2024-06-01T09:00:00.000Z",
      ]);

      assert.equal(await demoLoadPending(handle.db), false, "complete: start --demo leaves it");
      const again = await loadDemo(handle.db);
      assert.ok(again.applications.every((a) => a.skipped && a.analyses === 0));
      assert.equal((await analysesOf("payments-service")).length, 2);
    });

    it("leaves an application of the same name that is not demo data alone", async () => {
      const claims = applications.find((a) => a.name === "claims-portal");
      assert.ok(claims);
      await handle.db.deleteFrom("applications").where("name", "=", "claims-portal").execute();
      await ingestAnalysis(handle.db, "claims-portal", claims.analyses[0] as AnalysisInput, {
        description: "our own claims portal",
      });
      const result = await loadDemo(handle.db);
      assert.deepEqual(
        result.applications.find((a) => a.name === "claims-portal"),
        { name: "claims-portal", analyses: 0, skipped: true },
      );
      assert.equal((await analysesOf("claims-portal")).length, 1);
      assert.equal(
        await demoLoadPending(handle.db),
        false,
        "start --demo never touches a store with own data",
      );
    });
  });
}
