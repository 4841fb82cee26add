/**
 * What the SQLite readers' CPU priority does to the event loop (issue 13 point 4), the mechanism alone:
 * `node test/bench/reader-priority.ts [seconds per round] [rounds]` (defaults 5 and 3).
 *
 * The main thread serves a tiny HTTP answer (a stand-in for /mcp/healthcheck) while a read pool
 * (sqlite-read-pool.ts, one reader per core + 1) runs CPU-bound reads back to back, and one normal thread
 * burns a core (a stand-in for the load generator and the service's other busy threads). A probe thread
 * (latency-probe.ts, BENCH_PROBE_RATE requests/s, default 200) times the answers. Rounds alternate the
 * readers' priority: "nice 10" (what they set themselves, sqlite-read-worker.ts), "nice 19", and "idle"
 * (SCHED_IDLE, set with util-linux chrt on each reader's thread id); a first round without readers
 * gives the floor. Reports p50 / p99 / max of the probe, the reads completed, and the readers'
 * scheduling as the kernel reports it.
 */

import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { availableParallelism, setPriority, tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { createReadPool, READER_THREAD_NAME } from "../../src/store/sqlite-read-pool.ts";
import type { ProbeOptions, ProbeResult } from "./latency-probe.ts";

export interface PriorityRound {
  readers: "none" | "nice 10" | "nice 19" | "idle";
  samples: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  readsPerSecond: number;
  /** The readers' scheduling as the kernel reports it (policy 5 is SCHED_IDLE), e.g. "policy 5 nice 0 ×3". */
  kernel: string;
}

function readerThreadIds(): number[] {
  return readdirSync("/proc/self/task")
    .filter((tid) => {
      try {
        return readFileSync(`/proc/self/task/${tid}/comm`, "utf8").trim() === READER_THREAD_NAME;
      } catch {
        return false;
      }
    })
    .map(Number);
}

function niceOfThisThread(): number {
  const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]);
}

/** Policy and nice of this process's reader threads, counted (Linux /proc). */
function readerScheduling(): string {
  const counts = new Map<string, number>();
  for (const tid of readdirSync("/proc/self/task")) {
    try {
      if (readFileSync(`/proc/self/task/${tid}/comm`, "utf8").trim() !== READER_THREAD_NAME) continue;
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const key = `policy ${fields[38]} nice ${fields[16]}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    } catch {
      // the thread ended
    }
  }
  return [...counts].map(([key, n]) => `${key} ×${n}`).join(", ") || "no readers";
}

const round2 = (n: number) => Math.round(n * 100) / 100;

/** A CPU-bound read of a few tens of milliseconds. */
const BUSY_READ =
  "with recursive c(x) as (select 1 union all select x + 1 from c where x < 200000) select count(*) as n from c";

function probe(options: ProbeOptions): Promise<ProbeResult> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL("./latency-probe.ts", import.meta.url), { workerData: options });
    worker.once("message", resolve);
    worker.once("error", reject);
  });
}

/** A thread at normal priority that keeps one core busy for `ms`. */
function burner(ms: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(
      `const end = Date.now() + ${ms}; let x = 0; while (Date.now() < end) x++; require("node:worker_threads").parentPort.postMessage(x);`,
      { eval: true },
    );
    worker.once("message", () => resolve());
    worker.once("error", reject);
  });
}

export async function runReaderPriorityBench(options: {
  seconds: number;
  rounds: number;
  probeRate: number;
}): Promise<PriorityRound[]> {
  const dir = mkdtempSync(join(tmpdir(), "reader-priority-"));
  const file = join(dir, "bench.db");
  const setup = new DatabaseSync(file);
  setup.exec("PRAGMA journal_mode = WAL; create table t (x integer)");
  setup.close();
  const server = createServer((_req, res) => res.end('{"status":"UP"}'));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const size = availableParallelism() + 1;
  const results: PriorityRound[] = [];
  const measure = async (readers: PriorityRound["readers"]) => {
    const pool = readers === "none" ? undefined : createReadPool(file, size);
    let reads = 0;
    let running = true;
    const loops = pool
      ? Array.from({ length: size }, async () => {
          while (running) {
            await pool.read(BUSY_READ, []);
            reads++;
          }
        })
      : [];
    // Every reader started (at nice 10, as the readers set themselves), then moved to the round's priority.
    const started10 = `policy 0 nice ${Math.max(10, niceOfThisThread())} ×${size}`;
    for (let waited = 0; pool && readerScheduling() !== started10; waited += 50) {
      if (waited > 30_000) throw new Error(`readers not at ${started10}: ${readerScheduling()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    for (const tid of readerThreadIds()) {
      if (readers === "nice 19") setPriority(tid, 19);
      if (readers === "idle") execFileSync("chrt", ["--idle", "--pid", "0", String(tid)]);
    }
    const kernel = readerScheduling();
    const readsBefore = reads;
    const started = performance.now();
    const [result] = await Promise.all([
      probe({
        url,
        method: "GET",
        headers: {},
        rate: options.probeRate,
        seconds: options.seconds,
        expect: "UP",
      }),
      burner(options.seconds * 1000),
    ]);
    const readsPerSecond = (reads - readsBefore) / ((performance.now() - started) / 1000);
    running = false;
    await Promise.all(loops);
    await pool?.close();
    if (result.failures > 0) throw new Error(`probe failures: ${result.firstFailure}`);
    const sorted = [...result.latenciesMs].sort((a, b) => a - b);
    const at = (p: number) => sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)] ?? Number.NaN;
    results.push({
      readers,
      samples: sorted.length,
      p50Ms: round2(at(0.5)),
      p99Ms: round2(at(0.99)),
      maxMs: round2(sorted.at(-1) ?? Number.NaN),
      readsPerSecond: round2(readsPerSecond),
      kernel,
    });
  };
  try {
    await measure("none");
    for (let i = 0; i < options.rounds; i++) {
      await measure("nice 10");
      await measure("nice 19");
      await measure("idle");
    }
  } finally {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return results;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const results = await runReaderPriorityBench({
    seconds: Number(process.argv[2] ?? "5"),
    rounds: Number(process.argv[3] ?? "3"),
    probeRate: Number(process.env.BENCH_PROBE_RATE ?? "200"),
  });
  process.stdout.write(
    `${[
      "| readers | kernel | probe samples | p50 ms | p99 ms | max ms | reads/s |",
      "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
      ...results.map(
        (r) =>
          `| ${r.readers} | ${r.kernel} | ${r.samples} | ${r.p50Ms} | ${r.p99Ms} | ${r.maxMs} | ${r.readsPerSecond} |`,
      ),
    ].join("\n")}\n`,
  );
}
