/**
 * `npm run fuzz`: runs every fuzz target (test/fuzz/targets.ts) with Jazzer.js (libFuzzer, coverage of
 * src/ instrumented, comparisons traced), each in its own process under a memory cap (V8 heap
 * `--max-old-space-size` and libFuzzer's `-rss_limit_mb`), a per-input time limit (`-timeout`: a hang
 * is a finding) and a wall clock. Seeds: test/fuzz/seeds/<target>/; the corpus grows in
 * test-artifacts/fuzz/<target>/corpus across runs; findings (crash-*, timeout-*, oom-*) land in
 * test-artifacts/fuzz/<target>/ and make the run fail. Each finding becomes a regression case
 * (test/fuzz/regressions/<target>/, test/unit/fuzz-regressions.test.ts).
 *
 * node test/fuzz/run.ts [--seconds 60] [--runs N] [--targets a,b] [--seed N] [--heap-mb 1024] [--rss-mb 2048]
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { type JazzerEnvironment, prepareJazzer } from "./jazzer/addon-compat.ts";
import { FUZZ_TARGETS, type FuzzTarget } from "./targets.ts";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..", "..");

export interface FuzzOptions {
  /** libFuzzer's -max_total_time (seconds), or */
  seconds?: number;
  /** a fixed number of executions (-runs), with a fixed -seed: what the test suite uses. */
  runs?: number;
  seed?: number;
  heapMb?: number;
  rssMb?: number;
  /** Seconds one input may take before it counts as a hang. */
  inputTimeoutSeconds?: number;
  /** Where the corpus and findings go; a fresh temporary folder when `fresh`. */
  outDir?: string;
  fresh?: boolean;
}

export interface FuzzResult {
  target: string;
  exitCode: number | null;
  signal: string | null;
  /** Executions libFuzzer reports. */
  executions: number;
  /** Coverage features / edges at the end ("ft" and "cov" of libFuzzer's status lines). */
  coverage: number;
  features: number;
  corpusUnits: number;
  peakRssMb: number;
  cpuSeconds: number;
  wallSeconds: number;
  /** Paths of the inputs libFuzzer wrote for a crash, hang (timeout) or memory overrun (oom). */
  findings: string[];
  /** What libFuzzer and the target printed about the finding (stack traces included). */
  findingLog: string;
  /** The process was killed by the wall clock. */
  killed: boolean;
  output: string;
}

/** Seconds of CPU this process's waited-for children used (Linux /proc; 0 elsewhere). */
function childrenCpuSeconds(): number {
  try {
    const fields = readFileSync("/proc/self/stat", "utf8").split(") ")[1]?.split(" ") ?? [];
    // fields after "(comm) ": state is [0]; cutime and cstime are stat fields 16 and 17
    return (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return 0;
  }
}

let jazzerEnvironment: JazzerEnvironment | undefined;

export async function runFuzzTarget(target: FuzzTarget, options: FuzzOptions = {}): Promise<FuzzResult> {
  jazzerEnvironment ??= prepareJazzer();
  const outDir = options.fresh
    ? mkdtempSync(join(tmpdir(), `fuzz-${target.name}-`))
    : join(options.outDir ?? join(root, "test-artifacts", "fuzz"), target.name);
  const corpus = join(outDir, "corpus");
  const findingsDir = join(outDir, "findings");
  mkdirSync(corpus, { recursive: true });
  mkdirSync(findingsDir, { recursive: true });
  const seeds = join(here, "seeds", target.name);
  const timeout = options.inputTimeoutSeconds ?? 10;
  const libFuzzer = [
    corpus,
    seeds,
    `-max_len=${target.maxLen}`,
    `-timeout=${timeout}`,
    `-rss_limit_mb=${options.rssMb ?? 2048}`,
    `-artifact_prefix=${findingsDir}/`,
    "-print_final_stats=1",
    ...(options.runs !== undefined
      ? [`-runs=${options.runs}`]
      : [`-max_total_time=${options.seconds ?? 60}`]),
    ...(options.seed !== undefined ? [`-seed=${options.seed}`] : []),
  ];
  const args = [
    `--max-old-space-size=${options.heapMb ?? 1024}`,
    "--import",
    join(here, "jazzer", "preload.ts"),
    join(root, "node_modules", "@jazzer.js", "core", "dist", "cli.js"),
    join(here, "jazzer", "entry.mjs"),
    ...(target.async ? [] : ["--sync"]),
    "--includes",
    join(root, "src"),
    "--timeout",
    String(timeout * 1000),
    "--",
    ...libFuzzer,
  ];
  const cpuBefore = childrenCpuSeconds();
  const started = performance.now();
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: {
      ...process.env,
      ...jazzerEnvironment,
      IMAGING_FUZZ_TARGET: join(here, "targets", `${target.name}.ts`),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  // The wall clock: start-up (instrumenting src/) plus the run, plus libFuzzer's own hang handling.
  const budget = ((options.seconds ?? 0) + (options.runs !== undefined ? 120 : 0) + timeout * 3 + 90) * 1000;
  let killed = false;
  const clock = setTimeout(() => {
    killed = true;
    child.kill("SIGKILL");
  }, budget);
  const [exitCode, signal] = await new Promise<[number | null, string | null]>((resolve) =>
    child.on("close", (code, sig) => resolve([code, sig])),
  );
  clearTimeout(clock);
  const number = (pattern: RegExp) => {
    const all = [...output.matchAll(pattern)];
    return Number(all.at(-1)?.[1] ?? 0);
  };
  const findings = readdirSync(findingsDir).map((name) => join(findingsDir, name));
  const logStart = output.search(/==\d+== |ERROR: libFuzzer|Uncaught Exception|FATAL ERROR/);
  const result: FuzzResult = {
    target: target.name,
    exitCode,
    signal,
    executions: number(/stat::number_of_executed_units:\s+(\d+)/g) || number(/Done (\d+) runs/g),
    coverage: number(/ cov: (\d+)/g),
    features: number(/ ft: (\d+)/g),
    corpusUnits: number(/ corp: (\d+)\//g),
    peakRssMb: number(/stat::peak_rss_mb:\s+(\d+)/g),
    cpuSeconds: Math.round((childrenCpuSeconds() - cpuBefore) * 10) / 10,
    wallSeconds: Math.round((performance.now() - started) / 100) / 10,
    findings,
    findingLog: logStart >= 0 ? output.slice(logStart, logStart + 4000) : "",
    killed,
    output,
  };
  if (options.fresh) rmSync(outDir, { recursive: true, force: true });
  return result;
}

export const failed = (r: FuzzResult): boolean => r.exitCode !== 0 || r.findings.length > 0 || r.killed;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      seconds: { type: "string", default: "60" },
      runs: { type: "string" },
      targets: { type: "string" },
      seed: { type: "string" },
      "heap-mb": { type: "string", default: "1024" },
      "rss-mb": { type: "string", default: "2048" },
    },
  });
  const names = values.targets?.split(",");
  const targets = FUZZ_TARGETS.filter((t) => !names || names.includes(t.name));
  if (names && targets.length !== names.length) {
    console.error(
      `unknown target in ${values.targets}; targets: ${FUZZ_TARGETS.map((t) => t.name).join(", ")}`,
    );
    process.exit(2);
  }
  const results: FuzzResult[] = [];
  for (const target of targets) {
    process.stderr.write(`fuzz: ${target.name} (${target.parses}) ... `);
    const result = await runFuzzTarget(target, {
      seconds: Number(values.seconds),
      ...(values.runs ? { runs: Number(values.runs) } : {}),
      ...(values.seed ? { seed: Number(values.seed) } : {}),
      heapMb: Number(values["heap-mb"]),
      rssMb: Number(values["rss-mb"]),
    });
    results.push(result);
    process.stderr.write(
      `${result.executions} runs, cov ${result.coverage}, ft ${result.features}, corpus ${result.corpusUnits}, ` +
        `${result.cpuSeconds} s CPU, peak RSS ${result.peakRssMb} MB${failed(result) ? `: FINDING (exit ${result.exitCode}${result.killed ? ", killed by the wall clock" : ""})` : ""}\n`,
    );
    if (failed(result)) process.stderr.write(`${result.findings.join("\n")}\n${result.findingLog}\n`);
  }
  const summary = join(root, "test-artifacts", "fuzz", "summary.json");
  mkdirSync(dirname(summary), { recursive: true });
  writeFileSync(
    summary,
    JSON.stringify(
      results.map(({ output: _, ...r }) => r),
      null,
      2,
    ),
  );
  const bad = results.filter(failed);
  console.log(`${results.length - bad.length} passed, ${bad.length} failed`);
  process.exitCode = bad.length > 0 ? 1 : 0;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
