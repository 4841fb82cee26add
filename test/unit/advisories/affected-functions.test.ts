import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { readOsvRecord } from "../../../src/scanner/advisories/osv-record.ts";
import { memberOfFunction, memberOfObject } from "../../../src/store/affected-functions.ts";

const fixture = (path: string) =>
  JSON.parse(readFileSync(new URL(`../../fixtures/osv/${path}`, import.meta.url), "utf8")) as Record<
    string,
    unknown
  >;

describe("affected functions of OSV records", () => {
  it("keeps ecosystem_specific.affected_functions per package, as written", () => {
    const read = readOsvRecord(fixture("affected-functions/GHSA-jf85-cpcp-j695.json"));
    assert.equal(read.kind, "record");
    if (read.kind !== "record") return;
    assert.deepEqual(
      read.record.advisory.affected.map((a) => [a.package, a.functions]),
      [
        ["lodash", ["(lodash).defaultsDeep"]],
        ["lodash-es", ["(lodash-es).defaultsDeep"]],
        ["lodash-amd", ["(lodash-amd).defaultsDeep"]],
        ["lodash.defaultsdeep", ["(lodash.defaultsdeep)"]],
      ],
    );
  });

  it("reads database_specific.affected_functions too, and none when neither is given", () => {
    const record = fixture("GHSA-jfh8-c2jp-5v3q.json");
    const read = readOsvRecord(record);
    assert.ok(
      read.kind === "record" && read.record.advisory.affected.every((a) => a.functions === undefined),
    );
    const affected = (record.affected as Record<string, unknown>[]).map((a) => ({
      ...a,
      database_specific: { affected_functions: ["org.apache.logging.log4j.core.lookup.JndiLookup.lookup"] },
    }));
    const withFunctions = readOsvRecord({ ...record, affected });
    assert.ok(withFunctions.kind === "record");
    assert.deepEqual(withFunctions.record.advisory.affected[0]?.functions, [
      "org.apache.logging.log4j.core.lookup.JndiLookup.lookup",
    ]);
  });

  it("a malformed affected_functions names its field", () => {
    const record = fixture("GHSA-p6mc-m468-83gw.json");
    const affected = (record.affected as Record<string, unknown>[]).map((a) => ({
      ...a,
      ecosystem_specific: { affected_functions: "lodash.baseSet" },
    }));
    const read = readOsvRecord({ ...record, affected });
    assert.equal(read.kind, "malformed");
    assert.match(
      read.kind === "malformed" ? read.reason : "",
      /^affected\[0\]\.ecosystem_specific\.affected_functions: /,
    );
  });

  it("names become member paths of their package, in every spelling GHSA uses", () => {
    assert.equal(memberOfFunction("npm", "lodash", "(lodash).defaultsDeep"), "defaultsDeep");
    assert.equal(memberOfFunction("npm", "lodash.defaultsdeep", "(lodash.defaultsdeep)"), "");
    assert.equal(memberOfFunction("npm", "lodash", "lodash.template"), "template");
    assert.equal(memberOfFunction("npm", "lodash-es", "lodash.template"), "template");
    assert.equal(memberOfFunction("npm", "lodash.template", "lodash.template"), "");
    assert.equal(
      memberOfFunction("npm", "express", "(express).Router.prototype.handle"),
      "Router.prototype.handle",
    );
    assert.equal(
      memberOfFunction(
        "maven",
        "org.apache.logging.log4j:log4j-core",
        "org.apache.logging.log4j.core.lookup.JndiLookup.lookup(java.lang.String)",
      ),
      "org.apache.logging.log4j.core.lookup.JndiLookup.lookup",
    );
    assert.equal(memberOfObject("lodash", "lodash.merge"), "merge");
    assert.equal(memberOfObject("lodash", "lodash/merge"), "merge");
    assert.equal(memberOfObject("lodash", "lodash/fp/merge"), "fp.merge");
    assert.equal(memberOfObject("lodash", "lodash"), "");
    assert.equal(memberOfObject("lodash.defaultsdeep", "lodash.defaultsdeep.default"), "");
    assert.equal(
      memberOfObject(
        "org.apache.logging.log4j:log4j-core",
        "org.apache.logging.log4j.core.LoggerContext.getContext",
      ),
      "org.apache.logging.log4j.core.LoggerContext.getContext",
    );
  });
});
