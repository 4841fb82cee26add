/**
 * Benchmark of the npm inventory (npm run bench:scan): a real ~2,000-package package-lock.json
 * (test/support/scan-subjects.ts benchLockfile), read by `imaging scan` and by @cyclonedx/cyclonedx-npm
 * (the peer tool: it asks `npm ls` for the tree) on the same input, rounds alternated.
 *
 * Measured, wall time per round:
 * - inventory: scanPath() in this process (walk, read, merge, dedupe): the issue's target, ≤ 1 s;
 * - `imaging scan --output FILE`: the whole command in its own process (Node.js start-up included);
 * - `cyclonedx-npm --package-lock-only --output-file FILE`: the peer tool, in its own process.
 * Both tools must list the same packages (name@version), or the run fails.
 *
 * Knobs: BENCH_SCAN_ROUNDS (5). The test suite runs runScanBench() at a tiny scale
 * (test/integration/scan-bench.test.ts).
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { createRegistryFetcher } from "../../src/scanner/registry/cached-fetch.ts";
import { INPUT_READERS, scanPath } from "../../src/scanner/scan.ts";
import { benchLockfile, cyclonedxNpmBin } from "../support/scan-subjects.ts";

const ROOT = resolve(fileURLToPath(new URL("../..", import.meta.url)));
const CLI = join(ROOT, "src", "cli", "main.ts");

export interface ScanBenchReport {
  input: string;
  lockfileEntries: number;
  packages: number;
  rounds: number;
  inventoryMs: number[];
  cliMs: number[];
  cyclonedxMs: number[];
}

const elapsed = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;

export async function runScanBench(input: string, rounds: number): Promise<ScanBenchReport> {
  const scratch = mkdtempSync(join(os.tmpdir(), "imaging-scan-bench-"));
  const cyclonedx = cyclonedxNpmBin();
  const lock = JSON.parse(readFileSync(join(input, "package-lock.json"), "utf8")) as {
    packages: Record<string, { link?: boolean }>;
  };
  const report: ScanBenchReport = {
    input,
    lockfileEntries: Object.keys(lock.packages).filter((path) => path.includes("node_modules/")).length,
    packages: 0,
    rounds,
    inventoryMs: [],
    cliMs: [],
    cyclonedxMs: [],
  };
  try {
    let ours = new Set<string>();
    let theirs = new Set<string>();
    for (let round = 0; round < rounds; round++) {
      let start = process.hrtime.bigint();
      const result = await scanPath(input, {
        readers: INPUT_READERS,
        fetcher: createRegistryFetcher({ cacheDir: join(scratch, "cache"), offline: true }),
        offline: true,
        npmRegistryUrl: "https://registry.npmjs.org",
        mavenRepositoryUrl: "https://repo.maven.apache.org/maven2",
        mavenLocalRepository: join(scratch, "m2"),
        progress: () => {},
      });
      report.inventoryMs.push(elapsed(start));
      ours = new Set(result.packages.map((p) => `${p.name}@${p.version}`));

      const document = join(scratch, "analysis.json");
      start = process.hrtime.bigint();
      execFileSync(
        process.execPath,
        [CLI, "scan", input, "--app", "bench", "--output", document, "--data-dir", scratch],
        {
          stdio: "ignore",
        },
      );
      report.cliMs.push(elapsed(start));

      const bom = join(scratch, "bom.cdx.json");
      start = process.hrtime.bigint();
      execFileSync(
        process.execPath,
        [cyclonedx, "--package-lock-only", "--output-format", "JSON", "--output-file", bom],
        {
          cwd: input,
          stdio: "ignore",
        },
      );
      report.cyclonedxMs.push(elapsed(start));
      // cyclonedx-npm nests components under the package that bundles or depends on them.
      type Component = { name: string; group?: string; version: string; components?: Component[] };
      const components: Component[] = [];
      const collect = (list: Component[] | undefined) => {
        for (const c of list ?? []) {
          components.push(c);
          collect(c.components);
        }
      };
      collect(JSON.parse(readFileSync(bom, "utf8")).components);
      // cyclonedx-npm lists the application's own workspaces as components too.
      theirs = new Set(
        components
          .map((c) => ({ name: `${c.group ? `${c.group}/` : ""}${c.name}`, version: c.version }))
          .filter((c) => lock.packages[`node_modules/${c.name}`]?.link !== true)
          .map((c) => `${c.name}@${c.version}`),
      );
    }
    const missing = [...theirs].filter((x) => !ours.has(x));
    const extra = [...ours].filter((x) => !theirs.has(x));
    if (missing.length > 0 || extra.length > 0) {
      throw new Error(
        `the tools disagree: missing ${missing.slice(0, 5).join(", ")}; extra ${extra.slice(0, 5).join(", ")}`,
      );
    }
    report.packages = ours.size;
    return report;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

export function describeReport(report: ScanBenchReport): string {
  const row = (what: string, values: number[]) =>
    `| ${what} | ${median(values).toFixed(0)} | ${Math.min(...values).toFixed(0)} | ${Math.max(...values).toFixed(0)} |`;
  return [
    `Input: ${report.lockfileEntries} lockfile entries, ${report.packages} distinct packages (name@version); ${report.rounds} rounds.`,
    "",
    "| what (wall time, ms) | median | min | max |",
    "|---|---|---|---|",
    row("inventory (scanPath, in process)", report.inventoryMs),
    row("`imaging scan --output` (whole command)", report.cliMs),
    row("`cyclonedx-npm --package-lock-only` (whole command)", report.cyclonedxMs),
  ].join("\n");
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const rounds = Number(process.env.BENCH_SCAN_ROUNDS ?? 5);
  const input = benchLockfile();
  const report = await runScanBench(input, rounds);
  const cpus = os.cpus();
  process.stdout.write(
    `Machine: ${cpus.length} × ${cpus[0]?.model ?? "?"}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, ` +
      `Node.js ${process.version}, ${new Date().toISOString()}\n\n${describeReport(report)}\n`,
  );
}
