/**
 * Benchmark of the JavaScript/TypeScript extraction (npm run bench:scan:js): a real ~1,000-file
 * application (typeorm 0.3.20 as published, locked by npm; test/support/js-subjects.ts), each mode in a
 * fresh Node.js process so its peak memory is its own, rounds alternated:
 * - inventory only: scanPath() on the lockfile alone (Scanner I, no code read): the baseline;
 * - extraction, one thread: extractJavaScript() with no worker;
 * - extraction, workers: extractJavaScript() on this thread plus one worker per extra core, as `imaging
 *   scan` runs it for a large input when those cores are idle (it stays on one thread when the load
 *   average already fills them);
 * - whole scan in process: scanPath() on the directory (walk, lockfile, extraction, linking);
 * - `imaging scan --output`: the whole command in its own process (Node.js start-up included).
 * Wall and CPU time (all threads) per round, lines per second of each, and peak RSS (maxRSS).
 * Worker and single-thread extraction must find the same references, or the run fails.
 *
 * The build (dist/, what the `imaging` command runs) is measured: the benchmark builds it first. The
 * test suite's tiny run (test/integration/scan-js-bench.test.ts, on firebase-tools 8.4.0) measures the
 * TypeScript sources instead, which Node.js's type stripping makes slower to load (main thread and
 * every worker).
 *
 * Knobs: BENCH_SCAN_JS_ROUNDS (3).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { defaultWorkerCount as DefaultWorkerCount } from "../../src/scanner/code/js/extract-files.ts";
import type { extractJavaScript as ExtractJavaScript } from "../../src/scanner/code/js/index.ts";
import type { isJavaScriptSource as IsJavaScriptSource } from "../../src/scanner/code/js/sources.ts";
import type { createRegistryFetcher as CreateRegistryFetcher } from "../../src/scanner/registry/cached-fetch.ts";
import type { INPUT_READERS as InputReaders, scanPath as ScanPath } from "../../src/scanner/scan.ts";
import type { walkFiles as WalkFiles } from "../../src/scanner/walk.ts";
import { typeorm } from "../support/js-subjects.ts";

const ROOT = resolve(fileURLToPath(new URL("../..", import.meta.url)));
const SELF = fileURLToPath(import.meta.url);

export type CodeSource = "dist" | "src";
const modulePath = (source: CodeSource, path: string) =>
  pathToFileURL(join(ROOT, source, `${path}.${source === "dist" ? "js" : "ts"}`)).href;
const cliPath = (source: CodeSource) => join(ROOT, source, "cli", `main.${source === "dist" ? "js" : "ts"}`);

export const MODES = ["inventory", "extract-1-thread", "extract-workers", "scan-in-process", "cli"] as const;
export type Mode = (typeof MODES)[number];

export interface RoundResult {
  wallMs: number;
  cpuMs: number;
  maxRssMb: number;
  /** Extraction modes: what was found (equal across modes). */
  files?: number;
  lines?: number;
  references?: number;
  workers?: number;
}

export interface JsScanBenchReport {
  input: string;
  source: CodeSource;
  rounds: number;
  files: number;
  lines: number;
  workers: number;
  results: Record<Mode, RoundResult[]>;
}

interface Code {
  extractJavaScript: typeof ExtractJavaScript;
  defaultWorkerCount: typeof DefaultWorkerCount;
  isJavaScriptSource: typeof IsJavaScriptSource;
  createRegistryFetcher: typeof CreateRegistryFetcher;
  INPUT_READERS: typeof InputReaders;
  scanPath: typeof ScanPath;
  walkFiles: typeof WalkFiles;
}

async function load(source: CodeSource): Promise<Code> {
  const [js, files, sources, registry, scan, walk] = await Promise.all([
    import(modulePath(source, "scanner/code/js/index")),
    import(modulePath(source, "scanner/code/js/extract-files")),
    import(modulePath(source, "scanner/code/js/sources")),
    import(modulePath(source, "scanner/registry/cached-fetch")),
    import(modulePath(source, "scanner/scan")),
    import(modulePath(source, "scanner/walk")),
  ]);
  return {
    extractJavaScript: js.extractJavaScript,
    defaultWorkerCount: files.defaultWorkerCount,
    isJavaScriptSource: sources.isJavaScriptSource,
    createRegistryFetcher: registry.createRegistryFetcher,
    INPUT_READERS: scan.INPUT_READERS,
    scanPath: scan.scanPath,
    walkFiles: walk.walkFiles,
  };
}

function scanOptions(code: Code, scratch: string) {
  return {
    readers: code.INPUT_READERS,
    fetcher: code.createRegistryFetcher({ cacheDir: join(scratch, "cache"), offline: true }),
    offline: true,
    npmRegistryUrl: "https://registry.npmjs.org",
    mavenRepositoryUrl: "https://repo.maven.apache.org/maven2",
    mavenLocalRepository: join(scratch, "m2"),
    progress: () => {},
  };
}

/** One mode, measured inside this (fresh) process. */
async function measure(mode: Mode, input: string, source: CodeSource): Promise<RoundResult> {
  const scratch = mkdtempSync(join(os.tmpdir(), "imaging-scan-js-bench-"));
  try {
    const code = await load(source);
    const { scanPath, walkFiles, extractJavaScript } = code;
    const options = scanOptions(code, scratch);
    const inventory =
      mode === "inventory" ? undefined : await scanPath(join(input, "package-lock.json"), options);
    const wall = performance.now();
    const cpu = process.cpuUsage();
    let found: Partial<RoundResult> = {};
    if (mode === "inventory") await scanPath(join(input, "package-lock.json"), options);
    else if (mode === "scan-in-process") {
      // The threads `imaging scan` chooses here and now (the load average decides on a busy machine).
      const workers = code.defaultWorkerCount(input, walkFiles(input, input).filter(code.isJavaScriptSource));
      const result = await scanPath(input, options);
      found = { references: result.references.length, workers };
    } else {
      // One thread, or this thread plus one worker per extra core (what an idle machine gets by default).
      const workers =
        mode === "extract-1-thread" ? 0 : Math.min(Math.max(os.availableParallelism() - 1, 1), 3);
      const result = await extractJavaScript(input, walkFiles(input, input), inventory?.packages ?? [], {
        ...(workers === undefined ? {} : { workers }),
      });
      found = {
        files: result.stats.files,
        lines: result.stats.lines,
        references: result.references.length,
        workers: result.stats.workers,
      };
    }
    const used = process.cpuUsage(cpu);
    return {
      wallMs: performance.now() - wall,
      cpuMs: (used.user + used.system) / 1000,
      maxRssMb: process.resourceUsage().maxRSS / 1024,
      ...found,
    };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

function inChild(mode: Mode, input: string, source: CodeSource): RoundResult {
  if (mode === "cli") {
    const scratch = mkdtempSync(join(os.tmpdir(), "imaging-scan-js-bench-"));
    try {
      const start = performance.now();
      // GNU time prints the child's CPU seconds and peak RSS (KiB) on stderr.
      const run = spawnSync(
        "/usr/bin/time",
        [
          "-f",
          "%U %S %M",
          process.execPath,
          cliPath(source),
          "scan",
          input,
          "--app",
          "bench",
          "--offline",
          "--output",
          join(scratch, "analysis.json"),
          "--data-dir",
          scratch,
        ],
        { encoding: "utf8" },
      );
      const wallMs = performance.now() - start;
      if (run.status !== 0) throw new Error(`imaging scan failed: ${run.stderr}`);
      const [user = "0", system = "0", rss = "0"] = run.stderr.trim().split("\n").pop()?.split(" ") ?? [];
      return { wallMs, cpuMs: (Number(user) + Number(system)) * 1000, maxRssMb: Number(rss) / 1024 };
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  }
  const out = execFileSync(process.execPath, [SELF, "--child", mode, input, source], {
    encoding: "utf8",
    maxBuffer: 16 * 1024 * 1024,
  });
  return JSON.parse(out.trim().split("\n").pop() as string) as RoundResult;
}

export async function runJsScanBench(
  input: string,
  rounds: number,
  source: CodeSource = "dist",
): Promise<JsScanBenchReport> {
  if (source === "dist") {
    execFileSync(
      process.execPath,
      [join(ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.build.json"],
      {
        cwd: ROOT,
        stdio: "inherit",
      },
    );
  }
  const results = Object.fromEntries(MODES.map((m) => [m, [] as RoundResult[]])) as Record<
    Mode,
    RoundResult[]
  >;
  for (let round = 0; round < rounds; round++) {
    for (const mode of MODES) results[mode].push(inChild(mode, input, source));
  }
  const single = results["extract-1-thread"][0] as RoundResult;
  for (const mode of ["extract-workers", "scan-in-process"] as const) {
    for (const r of results[mode]) {
      if (r.references !== single.references) {
        throw new Error(`${mode} found ${r.references} references, one thread ${single.references}`);
      }
    }
  }
  return {
    input,
    source,
    rounds,
    files: single.files ?? 0,
    lines: single.lines ?? 0,
    workers: results["extract-workers"][0]?.workers ?? 0,
    results,
  };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

const LABELS: Record<Mode, string> = {
  inventory: "inventory only (lockfile, no code: the baseline)",
  "extract-1-thread": "extraction, one thread",
  "extract-workers": "extraction, this thread + worker threads (one per extra core)",
  "scan-in-process": "whole scan in process (walk, lockfile, extraction, linking; threads chosen by load)",
  cli: "`imaging scan --output` (whole command, Node.js start-up included)",
};

export function describeReport(report: JsScanBenchReport): string {
  const load = os.loadavg().map((l) => l.toFixed(1));
  const lines = [
    `Input: ${report.input} — ${report.files} files, ${report.lines} lines extracted; ${report.rounds} rounds; measured: ${report.source}/.`,
    `Machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? "?"}, ${Math.round(os.totalmem() / 2 ** 30)} GiB; load average at the end ${load.join(" / ")}.`,
    "",
    "| mode | worker threads | wall ms (median, min–max) | CPU ms (median) | lines/s (wall) | lines per CPU-second | peak RSS MB |",
    "|---|---|---|---|---|---|---|",
  ];
  const baseline = median(report.results.inventory.map((r) => r.wallMs));
  const threads = (rows: RoundResult[]) =>
    rows[0]?.workers === undefined ? "—" : [...new Set(rows.map((r) => r.workers))].join(", ");
  for (const mode of MODES) {
    const rows = report.results[mode];
    const wall = median(rows.map((r) => r.wallMs));
    const cpu = median(rows.map((r) => r.cpuMs));
    const extracting = mode !== "inventory";
    lines.push(
      `| ${LABELS[mode]} | ${threads(rows)} | ${wall.toFixed(0)} (${Math.min(...rows.map((r) => r.wallMs)).toFixed(0)}–${Math.max(...rows.map((r) => r.wallMs)).toFixed(0)}) | ${cpu.toFixed(0)} | ${extracting ? Math.round((report.lines / wall) * 1000).toLocaleString("en") : "—"} | ${extracting ? Math.round((report.lines / cpu) * 1000).toLocaleString("en") : "—"} | ${median(rows.map((r) => r.maxRssMb)).toFixed(0)} |`,
    );
  }
  const one = median(report.results["extract-1-thread"].map((r) => r.wallMs));
  const workers = median(report.results["extract-workers"].map((r) => r.wallMs));
  lines.push(
    "",
    `Worker threads vs one thread (wall): ${(one / workers).toFixed(2)}×. Whole scan vs inventory only: ` +
      `${(median(report.results["scan-in-process"].map((r) => r.wallMs)) / baseline).toFixed(1)}× the baseline's time.`,
  );
  return lines.join("\n");
}

const args = process.argv.slice(2);
if (args[0] === "--child") {
  const result = await measure(args[1] as Mode, args[2] as string, (args[3] ?? "dist") as CodeSource);
  process.stdout.write(`${JSON.stringify(result)}\n`);
} else if (process.argv[1] && resolve(process.argv[1]) === SELF) {
  const rounds = Number(process.env.BENCH_SCAN_JS_ROUNDS ?? 3);
  const report = await runJsScanBench(typeorm(), rounds);
  console.log(describeReport(report));
}
