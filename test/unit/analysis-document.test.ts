import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  analysisDocumentJsonSchema,
  analysisDocumentOf,
  analysisInputOf,
  parseAnalysisDocument,
} from "../../src/scanner/analysis-document.ts";
import type { AnalysisInput } from "../../src/store/input-records.ts";

const input: AnalysisInput = {
  analyzedAt: "2024-06-01T00:00:00Z",
  packages: [{ ecosystem: "npm", name: "lodash", version: "4.17.15" }],
  objects: [
    {
      id: "lodash/merge",
      package: "npm:lodash",
      name: "merge",
      fullName: "lodash.merge",
      mangling: "merge(object, sources)",
      type: "JavaScript Function",
      typeId: "JS_FUNCTION",
    },
  ],
  references: [
    {
      from: {
        id: "src/cart.js#update",
        name: "update",
        fullName: "cart.update",
        type: "JavaScript Function",
        typeId: "JS_FUNCTION",
      },
      to: "lodash/merge",
    },
  ],
};

describe("analysis document", () => {
  it("round-trips what imaging scan writes through what the REST API reads", () => {
    const document = analysisDocumentOf("storefront", input, {
      scanner: { name: "imaging", version: "1.0.0" },
      warnings: [{ file: "package-lock.json", message: "x" }],
    });
    const parsed = parseAnalysisDocument(JSON.parse(JSON.stringify(document)));
    assert.ok(parsed.ok);
    assert.deepEqual(parsed.document, document);
    assert.deepEqual(analysisInputOf(parsed.document), input);
  });

  it("refuses an object of a package the document does not list, naming the field", () => {
    const document = analysisDocumentOf("storefront", { ...input, packages: [] });
    assert.deepEqual(parseAnalysisDocument(document), {
      ok: false,
      detail: "objects[0].package: 'npm:lodash' is not one of the document's packages (<ecosystem>:<name>)",
      inconsistent: true,
    });
  });

  it("has a JSON Schema requiring application, analyzedAt and packages", () => {
    assert.deepEqual([...(analysisDocumentJsonSchema.required ?? [])].sort(), [
      "analyzedAt",
      "application",
      "packages",
    ]);
  });

  it("publishes in its JSON Schema that a blank name is refused, as the upload does", () => {
    type Branch = { properties: { ecosystem: { const: string }; name: { pattern: string } } };
    type Published = { properties: { packages: { items: { oneOf: Branch[] } } } };
    const branches = (analysisDocumentJsonSchema as unknown as Published).properties.packages.items.oneOf;
    assert.deepEqual(
      branches.map((b) => b.properties.ecosystem.const),
      ["npm", "maven"],
    );
    for (const branch of branches) {
      const pattern = new RegExp(branch.properties.name.pattern);
      for (const blank of ["\t", " ", "\n  "]) {
        assert.equal(pattern.test(blank), false, "the schema refuses it");
      }
    }
    for (const blank of ["\t", " ", "\n  "]) {
      const document = analysisDocumentOf("storefront", {
        ...input,
        packages: [{ ecosystem: "npm", name: blank, version: "4.17.21" }],
        objects: [],
        references: [],
      });
      const parsed = parseAnalysisDocument(JSON.parse(JSON.stringify(document)));
      assert.equal(parsed.ok, false, "the upload refuses it");
    }
    assert.equal(new RegExp(branches[0]?.properties.name.pattern ?? "").test("lodash"), true);
    assert.equal(new RegExp(branches[1]?.properties.name.pattern ?? "").test("org.example:core"), true);
  });
});
