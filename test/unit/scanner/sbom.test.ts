import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ScanInputError } from "../../../src/scanner/inventory.ts";
import { readSbom, sbomReader } from "../../../src/scanner/sbom/reader.ts";

const brief = (
  packages: { ecosystem: string; name: string; version: string; dev: boolean; direct: boolean }[],
) =>
  packages
    .map((p) => `${p.ecosystem}:${p.name}@${p.version}${p.dev ? " dev" : ""}${p.direct ? " direct" : ""}`)
    .sort();

describe("SBOM reader", () => {
  it("claims SBOM file names only", () => {
    for (const name of ["bom.json", "sbom.json", "app.cdx.json", "dist/app.spdx.json", "x-cyclonedx.json"]) {
      assert.ok(sbomReader.claims(name), name);
    }
    for (const name of ["package.json", "package-lock.json", "tsconfig.json", "combom.json"]) {
      assert.ok(!sbomReader.claims(name), name);
    }
  });

  it("CycloneDX: nested components, npm and Maven purls, dev and direct, other ecosystems counted", () => {
    const bom = {
      bomFormat: "CycloneDX",
      specVersion: "1.5",
      metadata: { component: { "bom-ref": "app", name: "app" } },
      components: [
        { "bom-ref": "a", name: "JSONStream", purl: "pkg:npm/jsonstream@1.3.5" },
        {
          "bom-ref": "b",
          group: "@babel",
          name: "core",
          purl: "pkg:npm/%40babel/core@7.24.0",
          properties: [{ name: "cdx:npm:package:development", value: "true" }],
          components: [
            { name: "log4j-core", purl: "pkg:maven/org.apache.logging.log4j/log4j-core@2.14.1?type=jar" },
          ],
        },
        { name: "requests", purl: "pkg:pypi/requests@2.31.0" },
        { name: "no-purl" },
      ],
      dependencies: [{ ref: "app", dependsOn: ["a"] }],
    };
    const read = readSbom(JSON.stringify(bom), "bom.cdx.json");
    assert.deepEqual(brief(read.packages), [
      "maven:org.apache.logging.log4j:log4j-core@2.14.1",
      "npm:@babel/core@7.24.0 dev",
      "npm:JSONStream@1.3.5 direct",
    ]);
    assert.deepEqual(
      read.warnings.map((w) => w.message),
      [
        "1 components of other ecosystems skipped (pypi 1)",
        "1 components without a package URL (purl) skipped",
      ],
    );
  });

  it("SPDX 2.3: purl external references; the described package is the application", () => {
    const spdx = {
      spdxVersion: "SPDX-2.3",
      SPDXID: "SPDXRef-DOCUMENT",
      documentDescribes: ["SPDXRef-app"],
      packages: [
        {
          SPDXID: "SPDXRef-app",
          name: "app",
          externalRefs: [{ referenceType: "purl", referenceLocator: "pkg:npm/app@1.0.0" }],
        },
        {
          SPDXID: "SPDXRef-lodash",
          name: "lodash",
          externalRefs: [
            {
              referenceCategory: "PACKAGE-MANAGER",
              referenceType: "purl",
              referenceLocator: "pkg:npm/lodash@4.17.15",
            },
          ],
        },
        {
          SPDXID: "SPDXRef-mocha",
          name: "mocha",
          externalRefs: [{ referenceType: "purl", referenceLocator: "pkg:npm/mocha@10.2.0" }],
        },
      ],
      relationships: [
        {
          spdxElementId: "SPDXRef-app",
          relationshipType: "DEPENDS_ON",
          relatedSpdxElement: "SPDXRef-lodash",
        },
        {
          spdxElementId: "SPDXRef-mocha",
          relationshipType: "DEV_DEPENDENCY_OF",
          relatedSpdxElement: "SPDXRef-app",
        },
      ],
    };
    assert.deepEqual(brief(readSbom(JSON.stringify(spdx), "app.spdx.json").packages), [
      "npm:lodash@4.17.15 direct",
      "npm:mocha@10.2.0 dev direct",
    ]);
  });

  it("refuses what it cannot read, naming the file and line", () => {
    const cases: [string, number | undefined, RegExp][] = [
      ['{\n  "bomFormat": "CycloneDX",\n  "specVersion": "1.3"\n}', 3, /specVersion "1.3" is not supported/],
      [
        '{\n  "spdxVersion": "SPDX-2.2",\n  "packages": []\n}',
        2,
        /"SPDX-2.2" is not supported \(SPDX-2.3 JSON is read\)/,
      ],
      ['{"name": "not an sbom"}', 1, /is neither a CycloneDX/],
      [
        '{\n  "bomFormat": "CycloneDX",\n  "components": [\n    {"purl": "pkg:npm/a@1"',
        4,
        /^not valid JSON: /,
      ],
    ];
    for (const [text, line, reason] of cases) {
      try {
        readSbom(text, "bom.json");
        assert.fail(`accepted ${text}`);
      } catch (error) {
        assert.ok(error instanceof ScanInputError, String(error));
        assert.equal(error.line, line, text);
        assert.match(error.reason, reason);
      }
    }
  });
});
