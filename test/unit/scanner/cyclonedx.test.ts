import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { buildCycloneDx, purlOf } from "../../../src/scanner/sbom/cyclonedx.ts";
import type { AnalysisExport } from "../../../src/store/analysis-export.ts";
import { validateCycloneDx } from "../../support/cyclonedx-schema.ts";

const options = {
  application: { name: "billing", description: "" },
  analyzedAt: "2024-01-15T10:00:00Z",
  tool: { name: "imaging-services", version: "test" },
  timestamp: "2024-02-01T00:00:00.000Z",
  serialNumber: "urn:uuid:3e671687-395b-41f5-a30f-a58921a69b79",
};

const collections = {
  packageId: 1,
  versionId: 10,
  ecosystem: "maven" as const,
  name: "commons-collections:commons-collections",
  version: "3.2.1",
  scope: "compile",
  releasedAt: null,
  releasedAtSource: null,
  saferClosestVersion: "3.2.2",
  safestVersion: "3.2.2",
  sources: ["WEB-INF/lib/commons-collections-3.2.1.jar"],
};

/** Shapes of what the Java extractor records: a class-level object and a constructor. */
const analysis = (vulnerabilityId: string): AnalysisExport => ({
  packages: [collections],
  vulnerabilities: [
    {
      id: 1,
      cveId: vulnerabilityId,
      aliases: [],
      severity: "UNKNOWN",
      cvssScore: null,
      summary: "",
      publishedAt: null,
      versionIds: [10],
      functions: new Map(),
    },
  ],
  references: [
    {
      packageId: 1,
      versionId: 10,
      source: {
        id: "a",
        name: "Loader",
        fullName: "com.example.Loader",
        type: "Java Class",
        typeId: "JV_CLASS",
      },
      target: {
        id: "t",
        name: "InvokerTransformer",
        fullName: "org.apache.commons.collections.functors.InvokerTransformer",
        mangling: "",
        type: "Java Class",
        typeId: "JV_CLASS",
      },
    },
  ],
});

describe("CycloneDX document of an analysis", () => {
  it("an advisory known only by its GHSA id, without score: GitHub as source, a rating without score", () => {
    const bom = buildCycloneDx(analysis("GHSA-6hgm-866r-3cjv"), options) as {
      vulnerabilities: { id: string; source: unknown; ratings: unknown; recommendation: string }[];
    };
    assert.ok(validateCycloneDx(bom), JSON.stringify(validateCycloneDx.errors?.slice(0, 3)));
    assert.deepEqual(bom.vulnerabilities[0]?.source, {
      name: "GitHub",
      url: "https://github.com/advisories/GHSA-6hgm-866r-3cjv",
    });
    assert.deepEqual(bom.vulnerabilities[0]?.ratings, [{ severity: "unknown" }]);
    assert.equal(
      bom.vulnerabilities[0]?.recommendation,
      "Upgrade commons-collections:commons-collections 3.2.1 to 3.2.2 (the smallest upgrade with no known vulnerability).",
    );
  });

  it("a malicious-package record id points at OSV; class-level objects are frames without a function", () => {
    const bom = buildCycloneDx(analysis("MAL-2024-1234"), options) as {
      vulnerabilities: { source: unknown }[];
      components: { evidence: { callstack: { frames: unknown[] } } }[];
    };
    assert.ok(validateCycloneDx(bom));
    assert.deepEqual(bom.vulnerabilities[0]?.source, {
      name: "OSV",
      url: "https://osv.dev/vulnerability/MAL-2024-1234",
    });
    assert.deepEqual(bom.components[0]?.evidence.callstack.frames, [
      {
        package: "org.apache.commons.collections.functors",
        module: "org.apache.commons.collections.functors.InvokerTransformer",
      },
      { package: "com.example", module: "com.example.Loader" },
    ]);
  });

  it("a field is a frame of its class; a method a function of its class, with its signature", () => {
    const base = analysis("CVE-2015-7501");
    const field = {
      id: "f",
      name: "EMPTY_MAP",
      fullName: "org.apache.commons.collections.MapUtils.EMPTY_MAP",
      mangling: "",
      type: "Java Field",
      typeId: "JV_FIELD",
    };
    const method = {
      id: "m",
      name: "transform",
      fullName: "org.apache.commons.collections.Transformer.transform",
      mangling: "transform(java.lang.Object) return java.lang.Object",
      type: "Java Method",
      typeId: "JV_METHOD",
    };
    const source = {
      id: "s",
      name: "run",
      fullName: "com.example.Job.run",
      type: "Java Method",
      typeId: "JV_METHOD",
    };
    const frames = (target: typeof field) =>
      (
        buildCycloneDx(
          { ...base, references: [{ packageId: 1, versionId: 10, source, target }] },
          options,
        ) as {
          components: { evidence: { callstack: { frames: unknown[] } } }[];
        }
      ).components[0]?.evidence.callstack.frames;
    assert.deepEqual(frames(field)?.[0], {
      package: "org.apache.commons.collections",
      module: "org.apache.commons.collections.MapUtils",
    });
    assert.deepEqual(frames(method), [
      {
        package: "org.apache.commons.collections",
        module: "org.apache.commons.collections.Transformer",
        function: "transform",
        parameters: ["transform(java.lang.Object) return java.lang.Object"],
      },
      { package: "com.example", module: "com.example.Job", function: "run" },
    ]);
  });

  it("an analysis without packages is a valid, empty document", () => {
    const bom = buildCycloneDx({ packages: [], vulnerabilities: [], references: [] }, options);
    assert.ok(validateCycloneDx(bom));
    assert.deepEqual((bom as { components: unknown[] }).components, []);
  });

  it("purls: npm scopes percent-encoded, Maven group and artifact", () => {
    assert.equal(
      purlOf({ ecosystem: "npm", name: "@babel/traverse", version: "7.23.2" }),
      "pkg:npm/%40babel/traverse@7.23.2",
    );
    assert.equal(purlOf({ ecosystem: "npm", name: "lodash", version: "4.17.21" }), "pkg:npm/lodash@4.17.21");
    assert.equal(
      purlOf({ ecosystem: "maven", name: "org.apache.logging.log4j:log4j-core", version: "2.17.1" }),
      "pkg:maven/org.apache.logging.log4j/log4j-core@2.17.1",
    );
  });
});
