/**
 * A tiny-scale run of npm run bench:gate-defaults (test/bench/gate-defaults.bench.ts): one npm application
 * of the corpus (localtunnel 2.0.2) and one jar (jsoup 1.17.1), each recorded by `imaging scan` into a store
 * holding the sample of real advisories, and the default quality gate evaluated on it.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { benchGateDefaults, RELEASE_THRESHOLDS, reportMarkdown } from "../bench/gate-defaults.bench.ts";

describe("bench:gate-defaults at a tiny scale", () => {
  it("evaluates the shipped gate and the releases rule's thresholds on real software", async () => {
    const report = await benchGateDefaults({ subjects: ["localtunnel-2.0.2", "jsoup-1.17.1"] });
    const [npm, jar] = report.subjects;
    assert.ok(npm && jar);
    assert.deepEqual(
      [npm.id, npm.error, jar.id, jar.error],
      ["localtunnel-2.0.2", undefined, "jsoup-1.17.1", undefined],
    );
    // a store as shipped checks the two vulnerability rules; the releases rule is off
    assert.deepEqual(Object.keys(npm.shipped.findings).sort(), [
      "no-referenced-severe-cve",
      "no-unfixable-vulnerability",
    ]);
    // localtunnel: 84 packages recorded, 21 of them production (as many as `npm ls --omit=dev` lists)
    assert.deepEqual([npm.packages, npm.production], [84, 21]);
    // axios 0.21.4 and others sit far behind their safest versions: the releases rule at its default
    // 10 would fail both subjects on staleness alone, while the shipped gate passes them (no HIGH CVE
    // of the sample in a package they refer to)
    assert.ok((npm.releasesBehind[10] ?? 0) >= 4, JSON.stringify(npm.releasesBehind));
    assert.ok((jar.releasesBehind[10] ?? 0) >= 1, JSON.stringify(jar.releasesBehind));
    assert.match(npm.furthest ?? "", /^axios 0\.21\.4: \d+ behind 1\./);
    assert.deepEqual([npm.shipped.verdict, jar.shipped.verdict], ["pass", "pass"]);
    // a higher threshold never flags more packages
    for (const s of report.subjects)
      for (let i = 1; i < RELEASE_THRESHOLDS.length; i++)
        assert.ok(
          (s.releasesBehind[RELEASE_THRESHOLDS[i] as number] ?? 0) <=
            (s.releasesBehind[RELEASE_THRESHOLDS[i - 1] as number] ?? 0),
        );
    const markdown = reportMarkdown(report);
    assert.match(markdown, /\| localtunnel-2\.0\.2 \| 84 \(21\) \| pass \| 0 \| 0 \|/);
    assert.match(markdown, /\| \*\*applications failing\*\* \| \| 0\/2 \| 0\/2 \| 0\/2 \| 2\/2 \|/);
  });
});
