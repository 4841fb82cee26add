import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { createApiKey } from "../../src/domain/api-keys.ts";
import { importAdvisories } from "../../src/scanner/advisories/import.ts";
import type { AnalysisDocument } from "../../src/scanner/analysis-document.ts";
import type { RunningService } from "../../src/service.ts";
import { type FakeRegistry, startFakeRegistry } from "../support/fake-registry.ts";
import { startTestService } from "../support/service.ts";
import { createTestStore, STORE_KINDS, type TestStore } from "../support/stores.ts";

const LOG4J = "org.apache.logging.log4j:log4j-core";
const LOG4SHELL = fileURLToPath(new URL("../fixtures/osv/GHSA-jfh8-c2jp-5v3q.json", import.meta.url));

/** What `imaging scan --json --output FILE` writes for a small Java service. */
function document(analyzedAt: string, log4jVersion: string): AnalysisDocument {
  return {
    application: "billing",
    analyzedAt,
    scanner: { name: "imaging", version: "test" },
    packages: [
      { ecosystem: "maven", name: LOG4J, version: log4jVersion },
      { ecosystem: "npm", name: "ms", version: "2.0.0" },
    ],
    objects: [
      {
        id: "log4j/LoggerContext.getContext",
        package: `maven:${LOG4J}`,
        name: "getContext",
        fullName: "org.apache.logging.log4j.core.LoggerContext.getContext",
        mangling: "getContext(boolean) return org.apache.logging.log4j.core.LoggerContext",
        type: "Java Method",
        typeId: "JV_METHOD",
      },
    ],
    references: [
      {
        from: {
          id: "com.example.billing.Audit.log",
          name: "log",
          fullName: "com.example.billing.Audit.log",
          type: "Java Method",
          typeId: "JV_METHOD",
        },
        to: "log4j/LoggerContext.getContext",
      },
    ],
    warnings: [{ file: "pom.xml", message: "parent com.example:parent:1 not found" }],
  };
}

for (const kind of STORE_KINDS) {
  describe(`POST /rest/applications/{name}/analyses on ${kind}`, () => {
    let store: TestStore;
    let service: RunningService;
    let registry: FakeRegistry;
    let admin: string;
    let viewer: string;
    const url = (path: string) => `${service.gatewayUrl}${path}`;
    const post = (body: unknown, key = admin, name = "billing", contentType = "application/json") =>
      fetch(url(`/rest/applications/${encodeURIComponent(name)}/analyses`), {
        method: "POST",
        headers: { "content-type": contentType, ...(key ? { "x-api-key": key } : {}) },
        body: typeof body === "string" ? body : JSON.stringify(body),
      });
    const problem = async (response: Response, status: number) => {
      assert.equal(response.status, status);
      assert.match(response.headers.get("content-type") ?? "", /^application\/problem\+json/);
      return (await response.json()) as { status: number; detail: string };
    };

    before(async () => {
      store = await createTestStore(kind);
      registry = await startFakeRegistry();
      service = await startTestService(
        store,
        {
          npmRegistryUrl: registry.npmUrl,
          mavenRepositoryUrl: registry.mavenUrl,
          analysisUploadMaxBytes: 4096,
        },
        async (handle) => {
          await importAdvisories(handle.db, [LOG4SHELL]);
        },
      );
      admin = (await createApiKey(service.store.db, { user: "ci", role: "admin", applications: [] })).key;
      viewer = (
        await createApiKey(service.store.db, { user: "bob", role: "viewer", applications: ["billing"] })
      ).key;
    });
    after(async () => {
      await service?.stop();
      await registry?.close();
      await store?.drop();
    });

    it("records the analysis, creating the application, and answers 201 with its summary", async () => {
      const response = await post(document("2024-01-15T10:00:00Z", "2.14.1"));
      assert.equal(response.status, 201, await response.clone().text());
      assert.deepEqual(await response.json(), {
        application: "billing",
        analyzedAt: "2024-01-15T10:00:00Z",
        seq: 1,
        packages: 2,
        externalObjects: 1,
        references: 1,
        vulnerablePackages: 1,
        warnings: 1,
        changes: {
          packages: { added: 2, removed: 0 },
          externalObjects: { added: 1, removed: 0 },
          references: { added: 1, removed: 0 },
        },
      });
    });

    it("makes the insights answer from it, with the facts gathered from the registries", async () => {
      // The registries are read after the answer (scanner/facts/background.ts): wait for the facts.
      const pending = async () =>
        (
          (await (
            await fetch(url("/rest/applications/billing/packages?limit=10"), {
              headers: { "x-api-key": viewer },
            })
          ).json()) as { factsPending: boolean }[]
        ).some((p) => p.factsPending);
      for (let i = 0; i < 600 && (await pending()); i++) await new Promise((r) => setTimeout(r, 50));
      assert.equal(await pending(), false, "the facts of both packages arrived");
      const response = await fetch(
        url(`/rest/applications/billing/insights/cve/CVE-2021-44228/occurrences?limit=20`),
        { headers: { "x-api-key": viewer } },
      );
      assert.equal(response.status, 200);
      const [occurrence] = (await response.json()) as {
        name: string;
        version: string;
        releaseDate: { dateTime: string; source: string | null } | null;
        saferClosestVersion: string | null;
        objects: { fullName: string }[];
      }[];
      assert.equal(occurrence?.name, LOG4J);
      assert.equal(occurrence?.version, "2.14.1");
      // The POM signature's time of log4j-core 2.14.1, read from the (recorded) Maven repository.
      assert.deepEqual(occurrence?.releaseDate, { dateTime: "2021-03-07T05:12:27Z", source: "signature" });
      assert.equal(occurrence?.saferClosestVersion, "2.15.0");
      assert.deepEqual(
        occurrence?.objects.map((o) => o.fullName),
        ["org.apache.logging.log4j.core.LoggerContext.getContext"],
      );
    });

    it("409 for a date not after the latest analysis, recording nothing", async () => {
      const body = await problem(await post(document("2024-01-15T10:00:00Z", "2.17.1")), 409);
      assert.match(body.detail, /already has an analysis at 2024-01-15T10:00:00Z/);
      await problem(await post(document("2023-06-01T00:00:00Z", "2.17.1")), 409);
      const detail = await (
        await fetch(url("/rest/applications/billing"), { headers: { "x-api-key": admin } })
      ).json();
      assert.equal((detail as { analyses: unknown[] }).analyses.length, 1);
    });

    it("a later analysis records what changed", async () => {
      const response = await post(document("2024-03-01T00:00:00Z", "2.17.1"));
      assert.equal(response.status, 201);
      const summary = (await response.json()) as Record<string, unknown>;
      assert.equal(summary.vulnerablePackages, 0);
      assert.deepEqual(summary.changes, {
        packages: { added: 1, removed: 1 },
        // log4j-core's upgrade moves its object and the reference to it to the new version.
        externalObjects: { added: 1, removed: 1 },
        references: { added: 1, removed: 1 },
      });
    });

    it("a document with a __proto__ or constructor key is JSON like any other: the key is dropped", async () => {
      const text = JSON.stringify(document("2024-04-01T00:00:00Z", "2.17.1")).replace(
        '"ecosystem":"npm"',
        '"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}},"ecosystem":"npm"',
      );
      const response = await post(text);
      assert.equal(response.status, 201, await response.clone().text());
      assert.equal(((await response.json()) as { packages: number }).packages, 2);
      assert.equal(({} as { polluted?: boolean }).polluted, undefined);
    });

    it("400 naming the field of an invalid document", async () => {
      const bad = {
        ...document("2025-01-01T00:00:00Z", "2.17.1"),
        packages: [{ ecosystem: "pypi", name: "x", version: "1" }],
      };
      const body = await problem(await post(bad), 400);
      assert.match(body.detail, /^Invalid analysis document: packages\[0\]\.ecosystem: /);
      const noDate = await problem(await post({ application: "billing", packages: [] }), 400);
      assert.match(noDate.detail, /analyzedAt/);
      await problem(await post("{ not json"), 400);
      const dangling = document("2025-01-01T00:00:00Z", "2.17.1");
      dangling.references[0] = {
        ...(dangling.references[0] as (typeof dangling.references)[number]),
        to: "nowhere",
      };
      const reference = await problem(await post(dangling), 409);
      assert.equal(
        reference.detail,
        "Invalid analysis document: references[0].to: 'nowhere' is not the id of one of the document's objects",
      );
    });

    it("409 when the document names another application", async () => {
      const body = await problem(
        await post(document("2025-01-01T00:00:00Z", "2.17.1"), admin, "payroll"),
        409,
      );
      assert.equal(body.detail, "The document analyzes 'billing' but was sent to application 'payroll'");
    });

    it("413 above ANALYSIS_UPLOAD_MAX_BYTES", async () => {
      const big = document("2025-01-01T00:00:00Z", "2.17.1");
      big.warnings = Array.from({ length: 100 }, (_, i) => ({ file: `f${i}`, message: "x".repeat(40) }));
      const body = await problem(await post(big), 413);
      assert.match(
        body.detail,
        /larger than the 4096 bytes this server accepts \(ANALYSIS_UPLOAD_MAX_BYTES\)/,
      );
    });

    it("415 for a body that is not JSON", async () => {
      await problem(await post("a,b", admin, "billing", "text/csv"), 415);
    });

    it("only administrators: 403 for a viewer, 401 without credentials", async () => {
      await problem(await post(document("2025-01-01T00:00:00Z", "2.17.1"), viewer), 403);
      await problem(await post(document("2025-01-01T00:00:00Z", "2.17.1"), ""), 401);
    });

    it("is described in the OpenAPI document with the analysis document's JSON Schema", async () => {
      const doc = (await (await fetch(url("/rest/openapi.json"))).json()) as {
        paths: Record<
          string,
          Record<
            string,
            {
              requestBody?: {
                content: Record<string, { schema: { properties: object; required: string[] } }>;
              };
              responses: Record<string, unknown>;
            }
          >
        >;
      };
      const operation = doc.paths["/rest/applications/{name}/analyses"]?.post;
      assert.ok(operation);
      const schema = operation.requestBody?.content["application/json"]?.schema;
      assert.deepEqual(Object.keys(schema?.properties ?? {}).sort(), [
        "analyzedAt",
        "application",
        "objects",
        "packages",
        "references",
        "scanner",
        "warnings",
      ]);
      assert.deepEqual(schema?.required.sort(), ["analyzedAt", "application", "packages"]);
      for (const status of ["201", "400", "401", "403", "409", "413"])
        assert.ok(operation.responses[status], status);
    });
  });
}
