import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import pg from "pg";
import { dropDatabase, postgresAdminUrl } from "../support/stores.ts";

/**
 * `npm run bench:occurrences` at a tiny scale, so that the benchmark cannot rot: it generates both stores
 * through the store's write path, measures the read model and the single-query baseline on both
 * databases (checking every answer against the generator's model and each other), the other list
 * operations and the HTTP phase. Its own cache directory and database; docs/benchmarks.md untouched.
 */
describe("bench:occurrences at a tiny scale", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "imaging-bench-occ-"));
  const database = `imaging_bench_tiny_${randomBytes(4).toString("hex")}`;
  after(async () => {
    rmSync(dataDir, { recursive: true, force: true });
    const admin = new pg.Client({ connectionString: postgresAdminUrl });
    await admin.connect();
    try {
      await dropDatabase(admin, database);
    } finally {
      await admin.end();
    }
  });

  it("runs from an empty cache and reports every phase with identical answers on both stores", () => {
    const run = spawnSync(process.execPath, ["test/bench/occurrences.bench.ts"], {
      cwd: join(import.meta.dirname, "../.."),
      encoding: "utf8",
      timeout: 600_000,
      env: {
        ...process.env,
        BENCH_SCALE: "0.005",
        BENCH_DATA_DIR: dataDir,
        BENCH_POSTGRES_URL: postgresAdminUrl,
        BENCH_POSTGRES_DATABASE: database,
        // Half a second per HTTP run still answers each URL many times, every answer checked.
        BENCH_HTTP_SECONDS: "0.5",
        BENCH_HTTP_WARMUP_SECONDS: "0",
        BENCH_CONNECTIONS: "2",
        // Every case and list operation still runs and is checked; five timed runs each are enough here.
        BENCH_ITERATIONS: "5",
        BENCH_WRITE_DOCS: "",
      },
    });
    assert.equal(run.status, 0, `the benchmark failed:\n${run.stderr.slice(-4000)}`);
    const report = JSON.parse(readFileSync(join(dataDir, "occurrences-last-run.json"), "utf8")) as {
      identicalAnswers: boolean;
      latency: Record<
        string,
        { label: string; packages: number; p95Ms: number; totalCpuMedianMs?: number }[]
      >;
      listOperations: Record<string, { label: string; p95Ms: number; items: number }[]>;
      http: { label: string; requestsPerSecond: number }[];
      generation: Record<string, { report: { modelSeconds: Record<string, number>; storage: unknown } }>;
    };
    assert.equal(report.identicalAnswers, true);
    assert.deepEqual(Object.keys(report.latency).sort(), [
      "postgres-baseline",
      "postgres-model",
      "sqlite-baseline",
      "sqlite-model",
    ]);
    for (const cases of Object.values(report.latency)) {
      assert.equal(cases.length, 9);
      assert.ok(cases.every((c) => c.packages > 0 && c.p95Ms > 0));
    }
    assert.deepEqual(Object.keys(report.listOperations).sort(), ["postgres", "sqlite"]);
    // Seven operations, three more of compare and gates, three more searches, and the seven previous queries beside them.
    assert.equal(report.listOperations.sqlite?.length, 17);
    for (const ops of Object.values(report.listOperations)) {
      // The paged answers count what the whole answers list (compare: changes; gate: findings).
      const items = (start: string, has: string) =>
        ops.find((o) => o.label.startsWith(start) && o.label.includes(has))?.items;
      assert.equal(items("compare analysis", "limit 100"), items("compare analysis", "whole lists"));
      assert.equal(items("gate evaluation", "stored verdict"), items("gate evaluation", "from the facts"));
      assert.ok((items("gate evaluation", "stored verdict") ?? 0) > 0);
      // Non-adjacent totals stored per pair (migration 018) equal the ones counted from the log.
      assert.equal(
        items("compare analysis 1 ", "limit 100"),
        items("compare analysis 1 ", "counted from the log"),
      );
    }
    assert.ok(report.http.some((r) => r.label.startsWith("occurrences, wide") && r.requestsPerSecond > 0));
    assert.ok(report.generation.sqlite?.report.storage && report.generation.postgres?.report.modelSeconds);
    assert.match(run.stdout, /#### In-process latency/);
    // PostgreSQL's CPU per query includes the server backends' (pg-server-cpu.ts).
    assert.ok(report.latency["postgres-model"]?.every((c) => (c.totalCpuMedianMs ?? 0) > 0));
  });

  it("compares the endpoint's read with migration 012's on both tiny stores (occurrence-reads.ts)", () => {
    const sqliteDir = readdirSync(dataDir).find((d) => d.startsWith("sqlite-") && !d.endsWith(".tmp"));
    assert.ok(sqliteDir, `no SQLite store in ${dataDir}`);
    const postgresUrl = new URL(postgresAdminUrl);
    postgresUrl.pathname = `/${database}`;
    for (const [target, reads] of [
      // SQLite: the endpoint's read (a task in a reader thread; as text and as the HTTP answer's bytes)
      // beside the same read's statements handed to the readers one by one, the lists read and inflated
      // on every page, and 012's rows.
      [
        join(dataDir, sqliteDir, "imaging.db"),
        [
          "read task \\(endpoint\\)",
          "read task as bytes \\(HTTP answer\\)",
          "statements through the pool",
          "lists, one statement, none kept \\(020\\)",
          "rows \\(012\\)",
        ],
      ],
      // PostgreSQL: the endpoint's read (kept lists) beside migration 015's one statement and 012's rows.
      [
        postgresUrl.toString(),
        ["cached lists \\(endpoint\\)", "lists, one statement \\(015\\)", "rows \\(012\\)"],
      ],
    ] as const) {
      const run = spawnSync(process.execPath, ["test/bench/occurrence-reads.ts", target, "3"], {
        cwd: join(import.meta.dirname, "../.."),
        encoding: "utf8",
        timeout: 300_000,
        env: { ...process.env, BENCH_DEEP_SKIP: "3" },
      });
      assert.equal(run.status, 0, `occurrence-reads.ts failed on ${target}:\n${run.stderr.slice(-4000)}`);
      assert.match(run.stdout, /every answer of every read equal/);
      // 8 cases x each read, each with a package count and CPU figures.
      const rows = run.stdout.split("\n").filter((l) => l.startsWith("| wide limit"));
      assert.equal(rows.length, 8 * reads.length, run.stdout);
      for (const read of reads)
        assert.match(
          run.stdout,
          new RegExp(`^\\| wide limit 50 skip 0 \\| ${read} \\| [1-9]\\d* \\| [\\d.]+ / [\\d.]+ \\|`, "m"),
        );
    }
  });
});
