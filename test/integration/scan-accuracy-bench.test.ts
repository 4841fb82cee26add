/**
 * A tiny-scale run of npm run bench:scan:accuracy (test/bench/scan-accuracy.bench.ts): one npm application
 * of the corpus (express-generator 4.16.1, devDependencies kept) and one jar (httpclient 4.5.14), scanned
 * by us and by cdxgen, compared with `npm ls --all` and `mvn dependency:list`, the jar's references with javap.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { AnalysisDocument } from "../../src/scanner/analysis-document.ts";
import {
  benchScanAccuracy,
  objectVersions,
  precision,
  recall,
  reportMarkdown,
  totals,
} from "../bench/scan-accuracy.bench.ts";
import { JAVA_CORPUS, javaCorpusSubject, javaOracle } from "../support/corpus/java-corpus.ts";
import { NPM_CORPUS, npmCorpusSubject, npmOracle } from "../support/corpus/npm-corpus.ts";

const NPM_SUBJECT = "express-generator-4.16.1";
const JAVA_SUBJECT = "httpclient-4.5.14";

describe("bench:scan:accuracy at a tiny scale", () => {
  it("scores our inventory and cdxgen's against npm ls and mvn dependency:list, and our references against javap", async () => {
    const report = await benchScanAccuracy({ subjects: [NPM_SUBJECT, JAVA_SUBJECT], peers: ["cdxgen"] });
    assert.deepEqual(
      report.subjects.map((s) => [s.id, s.ecosystem]),
      [
        [NPM_SUBJECT, "npm"],
        [JAVA_SUBJECT, "maven"],
      ],
    );
    const [npm, java] = report.subjects as [(typeof report.subjects)[0], (typeof report.subjects)[0]];

    // the oracles are the package managers' own answers
    const npmSubject = NPM_CORPUS.find((s) => s.id === NPM_SUBJECT);
    assert.ok(npmSubject);
    const npmAll = npmOracle(npmCorpusSubject(npmSubject)).all;
    assert.equal(npm.oracle, npmAll.size);
    assert.ok(npmAll.has("mocha@6.1.4") && npmAll.has("ejs@2.6.1"), "dev and production packages");
    const javaSubject = JAVA_CORPUS.find((s) => s.id === JAVA_SUBJECT);
    assert.ok(javaSubject);
    assert.deepEqual([...javaOracle(javaSubject, await javaCorpusSubject(javaSubject))].sort(), [
      "commons-codec:commons-codec@1.11",
      "commons-logging:commons-logging@1.2",
      "org.apache.httpcomponents:httpcore@4.4.16",
    ]);
    assert.equal(java.oracle, 3);

    // an npm lockfile: our inventory is npm's, package for package
    assert.equal(npm.ours.error, undefined);
    assert.deepEqual(
      [precision(npm.ours.vsOracle), recall(npm.ours.vsOracle)],
      [1, 1],
      JSON.stringify(npm.ours),
    );
    // each object of a package installed at several versions names the copy Node.js loads there
    assert.ok(npm.versions, "per-version object precision is measured");
    assert.equal(npm.versions.right, npm.versions.checked, JSON.stringify(npm.versions));
    // cdxgen ran on the same input and was scored the same way
    const cdxgen = npm.peers.cdxgen;
    assert.ok(cdxgen && cdxgen.error === undefined && cdxgen.vsOracle.found > 300, JSON.stringify(cdxgen));
    assert.ok(cdxgen.ms > 0 && npm.ours.ms > 0);
    assert.ok(npm.oursVsPeer.cdxgen);

    // the jar's external references per javap, on the runtime class path only
    assert.ok(java.objects && java.objects.all.expected > 1000, JSON.stringify(java.objects));
    assert.ok(
      java.objects.methods.expected > 500 && java.objects.methods.expected < java.objects.all.expected,
    );
    assert.equal(java.ours.error, undefined);

    const markdown = reportMarkdown(report);
    assert.match(markdown, /\| express-generator-4\.16\.1 \| npm application \| \d+ \| 100\.0 \/ 100\.0 \|/);
    assert.match(markdown, /\| \*\*total npm\*\* \(1\) \|/);
    assert.match(markdown, /\| \*\*total maven\*\* \(1\) \| \| 3 \|/);
    assert.equal(totals(report, "maven")?.subjects, 1);
  });

  it("counts an object naming a version the referring file does not load as wrong", () => {
    const object = (version: string) => ({
      id: `npm:lodash@${version}:lodash.merge`,
      package: "npm:lodash",
      version,
      name: "merge",
      fullName: "lodash.merge",
      mangling: "",
      type: "JavaScript Function",
      typeId: "JS_FUNCTION",
    });
    const from = (file: string) => ({
      id: `JS_MODULE:[${file}]`,
      name: file,
      fullName: `[${file}]`,
      type: "JavaScript Module",
      typeId: "JS_MODULE",
    });
    const document = {
      packages: [
        { ecosystem: "npm", name: "lodash", version: "4.17.4" },
        { ecosystem: "npm", name: "lodash", version: "4.17.10" },
        { ecosystem: "npm", name: "ms", version: "2.1.3" },
      ],
      objects: [object("4.17.4"), object("4.17.10")],
      references: [
        { from: from("index.js"), to: "npm:lodash@4.17.4:lodash.merge" },
        { from: from("tools/old.js"), to: "npm:lodash@4.17.4:lodash.merge" },
        { from: from("tools/new.js"), to: "npm:lodash@4.17.10:lodash.merge" },
      ],
    } as unknown as AnalysisDocument;
    const resolution = { "": { lodash: "4.17.4" }, tools: { lodash: "4.17.10" } };
    assert.deepEqual(objectVersions(document, resolution), {
      checked: 3,
      right: 2,
      wrong: ["tools/old.js → lodash@4.17.4 (loaded: 4.17.10)"],
    });
  });
});
