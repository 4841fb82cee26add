import { globSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join, relative, resolve } from "node:path";
import { finished } from "node:stream/promises";
import { run } from "node:test";
import { spec } from "node:test/reporters";
import { globalSetup, globalTeardown } from "./global-setup.ts";

/**
 * `npm test`'s runner. Every test file under test/unit, test/integration and test/e2e runs (found by glob,
 * so new files are picked up), each in its own process as with `node --test`, in two groups at once:
 * - the serial group, one file at a time (TEST_SERIAL_CONCURRENCY to try more): the files that start whole systems (replicas behind HAProxy,
 *   the tiny benchmark runs, scan end-to-end runs, Schemathesis...), which would mostly compete for the
 *   same two cores and stretch each other's waits if run together;
 * - the parallel group, TEST_CONCURRENCY files at a time (default 2): everything else. Suites share no
 *   fixed port, database, temporary directory or Keycloak realm (ephemeral ports, random database and
 *   realm names, mkdtemp), and the caches outside the repository are built under a lock (cache-lock.ts),
 *   so they can run side by side. TEST_CONCURRENCY=1 runs every file one at a time, both groups included.
 * Within each group the files that took longest last time start first (durations kept in
 * test-artifacts/test-durations.json), so that no long file is left to run alone at the end.
 * The global setup (the console's bundle, the run's Keycloak) runs once, here, before both groups.
 */
const PATTERNS = ["test/unit/**/*.test.ts", "test/integration/**/*.test.ts", "test/e2e/**/*.test.ts"];

/**
 * Files run one at a time (paths relative to the repository root; each must exist): each starts a whole
 * system of several processes (replicas behind HAProxy, a benchmark with its load generator, a scan
 * followed by the service, Schemathesis against the service) that keeps both cores busy by itself.
 */
const SERIAL = [
  "test/e2e/replicas-keycloak.test.ts",
  // Not beside replicas-keycloak's 200-client load: on two saturated cores the run's Keycloak answered its
  // realm provisioning after the Admin API's 15 s timeout (three CI rehearsals of session 7). Its embedded
  // half runs serial with it: the sign-in journey is one file, written once for both providers.
  "test/e2e/sign-in.test.ts",
  "test/e2e/replicas-embedded.test.ts",
  // Three replicas, HAProxy and a PostgreSQL server of its own, under load through restarts and faults.
  "test/integration/replica-faults.test.ts",
  "test/integration/bench-occurrences.test.ts",
  "test/integration/occurrences-http-bench.test.ts",
  "test/integration/gateway-bench.test.ts",
  "test/integration/mcp-bench.test.ts",
  "test/integration/replicas-bench.test.ts",
  "test/integration/hop-floor-bench.test.ts",
  "test/integration/console-bench.test.ts",
  "test/e2e/scan-to-occurrences.test.ts",
  "test/e2e/java-scan-to-occurrences.test.ts",
  "test/integration/rest-openapi-fuzz.test.ts",
] as const;

const DURATIONS_FILE = join("test-artifacts", "test-durations.json");

function positiveInteger(name: string, fallback: string): number {
  const value = process.env[name] ?? fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a positive integer, got "${value}"`);
  return n;
}

const concurrency = (): number => positiveInteger("TEST_CONCURRENCY", "2");

/**
 * Serial-group files at once (default 1). They share no port, directory or database either, but each
 * keeps both cores busy; gateway-bench's tiny soak (20 connections for 1 s, each must be answered) is
 * the one that has failed on an overloaded machine, so two at a time stays a trial setting for now.
 */
const serialConcurrency = (): number => positiveInteger("TEST_SERIAL_CONCURRENCY", "1");

function previousDurations(): Record<string, number> {
  try {
    return JSON.parse(readFileSync(DURATIONS_FILE, "utf8")) as Record<string, number>;
  } catch {
    return {};
  }
}

/** Longest first; files without a recorded duration (new ones) first of all, as they may be long. */
function longestFirst(files: string[], durations: Record<string, number>): string[] {
  const ms = (file: string) => durations[file] ?? Number.POSITIVE_INFINITY;
  return [...files].sort((a, b) => ms(b) - ms(a) || a.localeCompare(b));
}

/** Per-file wall times of this run, saved after each file so that an interrupted run still leaves them. */
class Durations {
  readonly measured: Record<string, number> = {};
  readonly previous: Record<string, number>;
  constructor(previous: Record<string, number>) {
    this.previous = previous;
  }

  record(file: string, ms: number, passed: boolean): void {
    this.measured[file] = ms;
    mkdirSync("test-artifacts", { recursive: true });
    writeFileSync(DURATIONS_FILE, `${JSON.stringify({ ...this.previous, ...this.measured }, null, 2)}\n`);
    process.stdout.write(`run-suite: ${passed ? "✔" : "✖"} ${file} (${(ms / 1000).toFixed(1)} s)\n`);
  }
}

/** Runs the files `filesAtOnce` at a time; resolves whether any test failed. */
async function runGroup(files: string[], filesAtOnce: number, durations: Durations): Promise<boolean> {
  let failed = false;
  if (files.length === 0) return failed;
  const stream = run({ files: files.map((f) => resolve(f)), concurrency: filesAtOnce });
  stream.on("test:fail", () => {
    failed = true;
  });
  stream.on("test:complete", ({ file, name, nesting, details }) => {
    // the runner's own event for a whole file: nesting 0, named by the path it was given
    if (file !== undefined && nesting === 0 && resolve(name) === file) {
      durations.record(relative(process.cwd(), file), Math.round(details.duration_ms), details.passed);
    }
  });
  const output = stream.compose(spec);
  output.pipe(process.stdout, { end: false });
  await finished(output);
  return failed;
}

async function main(): Promise<void> {
  const started = performance.now();
  // patterns on the command line select files (e.g. `node test/support/run-suite.ts "test/e2e/**/*.test.ts"`)
  const selected = process.argv.slice(2);
  const all = [...new Set((selected.length > 0 ? selected : PATTERNS).flatMap((p) => globSync(p)))].sort();
  const missing = SERIAL.filter((file) => !globSync(file).includes(file));
  if (missing.length > 0) throw new Error(`run-suite: serial files not found: ${missing.join(", ")}`);
  if (all.length === 0) throw new Error(`run-suite: no test file matches ${selected.join(" ")}`);
  const serialSet = new Set<string>(SERIAL);
  const previous = previousDurations();
  const durations = new Durations(previous);
  const serial = longestFirst(
    all.filter((file) => serialSet.has(file)),
    previous,
  );
  const parallel = longestFirst(
    all.filter((file) => !serialSet.has(file)),
    previous,
  );

  // Every test file, and every service or CLI it spawns, is a new Node process that compiles the same
  // modules again: V8's code cache on disk (keyed by each file's content and Node's version) halves that
  // start-up CPU from the second process on. Inherited by all children through the environment.
  process.env.NODE_COMPILE_CACHE ??= join(homedir(), ".cache", "imaging-ci", "node-compile-cache");

  await globalSetup();
  let failures: boolean[];
  try {
    // TEST_CONCURRENCY=1: every file one at a time, as `node --test --test-concurrency=1` did
    failures =
      concurrency() === 1
        ? [await runGroup([...serial, ...parallel], 1, durations)]
        : await Promise.all([
            runGroup(serial, serialConcurrency(), durations),
            runGroup(parallel, concurrency(), durations),
          ]);
  } finally {
    await globalTeardown();
  }

  const { measured } = durations;
  const slowest = Object.entries(measured)
    .sort(([, a], [, b]) => b - a)
    .slice(0, 15);
  const total = Object.values(measured).reduce((sum, ms) => sum + ms, 0);
  process.stdout.write(
    `\nrun-suite: ${Object.keys(measured).length} files (${serial.length} serial ×${serialConcurrency()}, ${parallel.length} ` +
      `parallel ×${concurrency()}), ${(total / 1000).toFixed(0)} s of file time in ` +
      `${((performance.now() - started) / 1000).toFixed(0)} s; slowest:\n` +
      slowest.map(([file, ms]) => `  ${(ms / 1000).toFixed(1).padStart(6)} s  ${file}\n`).join(""),
  );
  if (failures.includes(true)) process.exitCode = 1;
}

await main();
