/**
 * Benchmark of re-scanning an archive online (npm run bench:scan:archive): what the answers kept between
 * scans save. Subject: a real Spring Boot 2.7.18 application jar built here by Maven (test/support/
 * java-subjects.ts: spring-boot-starter-web, log4j2, commons-text; a fully executable jar, 30 nested jars,
 * 14 of them without Maven metadata: Spring's and Tomcat's). Each run is `imaging scan <jar> --output`
 * in a process of its own, as a user runs it, on one data directory whose caches a first online scan filled:
 *
 * - offline: `--offline` (every answer from the HTTP cache and the kept answers);
 * - online: the same scan online, Maven Central reached (POMs immutable, `.sha1` files cached, the
 *   answers of SHA-1 identification kept), the search service a local double in Maven Central's shape.
 *
 * Alternated BENCH_ARCHIVE_ROUNDS times (default 5), wall time per run; the ratio is online / offline
 * (target ≤ 1.2). BENCH_ARCHIVE_BASELINE=<checkout> also measures another checkout's CLI the same way
 * (its own fresh data directory), side by side. Prints a Markdown report (docs/benchmarks.md keeps it).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { builtSpringBootApp } from "../support/java-subjects.ts";
import { knob } from "./bench-kit.ts";

const SELF = fileURLToPath(import.meta.url);
const OWN_CLI = fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url));

interface Side {
  name: string;
  offlineMs: number[];
  onlineMs: number[];
  packages: number;
}

export interface ArchiveBenchReport {
  subject: string;
  rounds: number;
  sides: Side[];
  machine: string;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

function timedScan(cli: string, jar: string, dataDir: string, offline: boolean, searchUrl: string) {
  const start = performance.now();
  const run = spawnSync(
    process.execPath,
    [
      cli,
      "scan",
      jar,
      "--app",
      "bench",
      "--json",
      "--output",
      join(dataDir, "analysis.json"),
      "--data-dir",
      dataDir,
      ...(offline ? ["--offline"] : []),
    ],
    {
      encoding: "utf8",
      env: {
        ...process.env,
        DATABASE_URL: "",
        MAVEN_SEARCH_URL: searchUrl,
        MAVEN_LOCAL_REPOSITORY: join(dataDir, "no-m2"),
      },
    },
  );
  const ms = performance.now() - start;
  if (run.status !== 0) throw new Error(`imaging scan failed (${cli}): ${run.stderr}`);
  return { ms, packages: (JSON.parse(run.stdout) as { packages: number }).packages };
}

export async function benchArchiveRescan(options: {
  rounds: number;
  baseline?: string;
}): Promise<ArchiveBenchReport> {
  const { jar } = await builtSpringBootApp();
  // Maven Central's search API in shape; it knows none of these jars (every answer a negative one)
  const search = createServer((_request, response) => {
    response.writeHead(200, { "content-type": "application/json" });
    response.end(
      JSON.stringify({
        responseHeader: { status: 0, QTime: 0 },
        response: { numFound: 0, start: 0, docs: [] },
      }),
    );
  });
  await new Promise<void>((resolve) => search.listen(0, "127.0.0.1", resolve));
  const searchUrl = `http://127.0.0.1:${(search.address() as AddressInfo).port}/solrsearch/select`;
  const sides: Side[] = [];
  try {
    const clis: [string, string][] = [["this checkout", OWN_CLI]];
    if (options.baseline)
      clis.push([`baseline (${options.baseline})`, join(options.baseline, "src", "cli", "main.ts")]);
    for (const [name, cli] of clis) {
      const dataDir = mkdtempSync(join(os.tmpdir(), "imaging-archive-bench-"));
      try {
        // the first online scan fills the HTTP cache and the kept answers
        const warm = timedScan(cli, jar, dataDir, false, searchUrl);
        const side: Side = { name, offlineMs: [], onlineMs: [], packages: warm.packages };
        for (let round = 0; round < options.rounds; round++) {
          side.offlineMs.push(timedScan(cli, jar, dataDir, true, searchUrl).ms);
          side.onlineMs.push(timedScan(cli, jar, dataDir, false, searchUrl).ms);
        }
        sides.push(side);
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    }
  } finally {
    search.close();
  }
  const cpus = os.cpus();
  return {
    subject: `${jar.split("/").pop()} (${Math.round(readFileSync(jar).length / 1e6)} MB, Spring Boot 2.7.18, fully executable)`,
    rounds: options.rounds,
    sides,
    machine: `${cpus.length} × ${cpus[0]?.model ?? "CPU"}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node.js ${process.versions.node}, load ${os.loadavg()[0]?.toFixed(1)}`,
  };
}

export function reportMarkdown(report: ArchiveBenchReport): string {
  const lines = [
    `Subject: ${report.subject}; ${report.rounds} rounds; ${report.machine}.`,
    "",
    "| checkout | packages | offline re-scan, median | online re-scan, median | online / offline |",
    "|---|---:|---:|---:|---:|",
  ];
  for (const s of report.sides) {
    const offline = median(s.offlineMs);
    const online = median(s.onlineMs);
    lines.push(
      `| ${s.name} | ${s.packages} | ${offline.toFixed(0)} ms | ${online.toFixed(0)} ms | ${(online / offline).toFixed(2)} |`,
    );
  }
  return lines.join("\n");
}

if (process.argv[1] === SELF) {
  const report = await benchArchiveRescan({
    rounds: knob("BENCH_ARCHIVE_ROUNDS", 5, 1),
    baseline: process.env.BENCH_ARCHIVE_BASELINE,
  });
  console.log(reportMarkdown(report));
}
