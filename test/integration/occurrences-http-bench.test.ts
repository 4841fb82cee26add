import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { renderHttpReport, runOccurrencesHttpBench } from "../bench/occurrences-http.bench.ts";

/**
 * The HTTP phase of bench:occurrences at a tiny scale: the benchmark's own code keeps working (it
 * throws on any non-2xx answer, failed probe or page differing between the designs). No timing asserted.
 */
describe("bench:occurrences HTTP phase at a tiny scale", () => {
  it("measures both designs through the gateway, with probes and compressed bytes", async () => {
    const report = await runOccurrencesHttpBench({
      seconds: 1,
      // The warm-up is the measured load again (same URL, same code): it proves nothing more here.
      warmupSeconds: 0,
      connections: 4,
      probeRate: 20,
      cpuPages: 50,
      generatorEnv: { BENCH_SCALE: "0.002" },
    });
    assert.equal(report.scale, 0.002);
    assert.deepEqual(
      report.designs.map((d) => d.design),
      ["reads on the event loop", "read pool"],
    );
    assert.equal(report.designs[0]?.readWorkers, 0);
    assert.ok((report.designs[1]?.readWorkers ?? 0) >= 2);
    assert.ok(report.store.widePackages > 0, "the wide CVE affects packages at this scale");
    for (const design of report.designs) {
      assert.ok(design.occurrences.requestsPerSecond > 0, design.design);
      for (const latency of [
        design.alone.health,
        design.alone.tools,
        design.loaded.health,
        design.loaded.tools,
      ]) {
        assert.ok(latency.samples > 0 && latency.p99Ms > 0, `${design.design}: a probe measured nothing`);
      }
      assert.equal(design.cpu.pages, 50);
      assert.ok(
        design.cpu.mainMsPerPage > 0 && design.cpu.processMsPerPage >= design.cpu.mainMsPerPage,
        design.design,
      );
      assert.ok(design.cpu.capacityPagesPerSecond > 0, design.design);
      assert.ok(design.bytes.br > 0 && design.bytes.br < design.bytes.identity, `${design.design}: br`);
      assert.ok(design.bytes.gzip > 0 && design.bytes.gzip < design.bytes.identity, `${design.design}: gzip`);
    }
    const text = renderHttpReport(report);
    assert.match(text, /\| read pool \(\d+ read workers\) \|/);
    assert.match(text, /≥ 250 requests\/s/);
    assert.match(
      text,
      /\| read pool \| 50 \| [\d.]+ \| [\d.]+ \|/,
      "the read pool's reader threads are counted",
    );
  });
});
