/**
 * Precision and recall of `imaging scan`'s JavaScript references on real npm applications, against
 * modules read by hand (test/fixtures/js-oracles): firebase-tools 8.4.0 (lodash pinned to the vulnerable
 * 4.17.15) and json-server 0.17.4 (an Express server). Targets of issue 12: ≥ 95 % recall and ≥ 98 %
 * precision of direct member uses; docs/scanner.md reports these numbers.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { extractJavaScript } from "../../src/scanner/code/js/index.ts";
import { walkFiles } from "../../src/scanner/walk.ts";
import { readOracle, scanOffline, scoreModules } from "../support/js-oracle.ts";
import { jsonServer } from "../support/js-subjects.ts";
import { firebaseTools } from "../support/scan-subjects.ts";

const SUBJECTS = [
  { oracle: "firebase-tools-8.4.0", dir: () => firebaseTools().published },
  { oracle: "json-server-0.17.4", dir: () => jsonServer() },
];

describe("JavaScript references against hand-checked modules of real applications", () => {
  for (const subject of SUBJECTS) {
    it(`${subject.oracle}: ≥ 95 % recall and ≥ 98 % precision of direct member uses`, async () => {
      const oracle = readOracle(subject.oracle);
      const scan = await scanOffline(subject.dir());
      assert.deepEqual(
        scan.warnings.filter((w) => /does not parse/.test(w.message)),
        [],
      );
      const scores = scoreModules(scan, oracle);
      const sum = (pick: (s: (typeof scores)[number]) => number) => scores.reduce((n, s) => n + pick(s), 0);
      const hits = sum((s) => s.truePositives);
      const recall = hits / sum((s) => s.expected);
      const precision = hits / sum((s) => s.found);
      const detail = JSON.stringify(scores.map(({ module, missed, extra }) => ({ module, missed, extra })));
      assert.ok(recall >= 0.95, `recall ${recall.toFixed(3)}: ${detail}`);
      assert.ok(precision >= 0.98, `precision ${precision.toFixed(3)}: ${detail}`);
      for (const score of scores) {
        assert.ok(score.memberRecall >= 0.95, `${score.module}: ${detail}`);
        assert.ok(score.memberPrecision >= 0.98, `${score.module}: ${detail}`);
      }
    });
  }

  it("firebase-tools: lodash's objects are at the lockfile's version, 4.17.15, and name exact functions", async () => {
    const scan = await scanOffline(firebaseTools().published);
    const lodash = scan.objects.filter((o) => o.package === "npm:lodash");
    assert.ok(lodash.length > 50, `firebase-tools uses many lodash functions, got ${lodash.length}`);
    assert.deepEqual(new Set(lodash.map((o) => o.id.split(":")[1]?.split("@")[1])), new Set(["4.17.15"]));
    const set = lodash.find((o) => o.fullName === "lodash.set");
    assert.deepEqual(set && { name: set.name, type: set.type, typeId: set.typeId, mangling: set.mangling }, {
      name: "set",
      type: "JavaScript Function",
      typeId: "JS_FUNCTION",
      mangling: "",
    });
  });

  it("worker threads find exactly what one thread finds (firebase-tools)", async () => {
    const dir = firebaseTools().published;
    const { packages } = await scanOffline(dir);
    const files = walkFiles(dir, dir);
    const one = await extractJavaScript(dir, files, packages, { workers: 0 });
    const two = await extractJavaScript(dir, files, packages, { workers: 2 });
    assert.equal(two.stats.workers, 2);
    assert.deepEqual(two.objects, one.objects);
    assert.deepEqual(two.references, one.references);
    assert.deepEqual(two.stats.lines, one.stats.lines);
  });
});
