/**
 * Benchmark of the Maven input reader (npm run bench:scan:maven): the inventory of a Maven project with
 * ~150 resolved artifacts, warm caches, side by side with `mvn -o dependency:list` on the same POM.
 *
 * 1. Setup (cached under ~/.cache/imaging-ci/scan-subjects/maven): the project's pom.xml, Maven's own
 *    answer (`mvn dependency:list`, which also fills the local repository Maven uses), one scanner run to
 *    fill the scanner's HTTP cache.
 * 2. Checks the answer: the reader's packages must be exactly Maven's (a benchmark of a wrong answer is
 *    worthless).
 * 3. Measures, BENCH_MAVEN_ITERATIONS times each (fresh reader state every time, as a new `imaging scan`):
 *    the reader with an empty local repository (every POM from the warm HTTP cache), the reader with
 *    Maven's filled local repository (read first, as ~/.m2 is), and BENCH_MAVEN_MVN_RUNS runs of
 *    `mvn -B -q -o dependency:list` (a new JVM each time, as a user or CI runs it).
 * 4. Prints a Markdown report (docs/benchmarks.md keeps the recorded one).
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ReaderContext } from "../../src/scanner/inventory.ts";
import { mavenReader } from "../../src/scanner/maven/reader.ts";
import { createRegistryFetcher } from "../../src/scanner/registry/cached-fetch.ts";
import {
  CENTRAL,
  mvnDependencyList,
  ORACLE_REPOSITORY,
  projectDir,
  SCANNER_HTTP_CACHE,
} from "../support/maven-subjects.ts";

/** A search service: Solr 8.9 (its grandparent pins log4j 2.13.2), Camel's Kafka component, commons-text. */
export const BENCH_PROJECT = `<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>com.example.bench</groupId>
  <artifactId>search-service</artifactId>
  <version>1.0.0</version>
  <dependencies>
    <dependency><groupId>org.apache.solr</groupId><artifactId>solr-core</artifactId><version>8.9.0</version></dependency>
    <dependency><groupId>org.apache.camel</groupId><artifactId>camel-kafka</artifactId><version>3.21.0</version></dependency>
    <dependency><groupId>org.apache.commons</groupId><artifactId>commons-text</artifactId><version>1.9</version></dependency>
    <dependency><groupId>junit</groupId><artifactId>junit</artifactId><version>4.13.2</version><scope>test</scope></dependency>
  </dependencies>
</project>
`;

export interface MavenBenchOptions {
  name: string;
  pomXml?: string;
  coordinates?: string;
  iterations: number;
  mvnRuns: number;
  /** MAVEN_OPTS of the timed `mvn` runs (default: Maven as users run it, whatever MAVEN_OPTS says). */
  mavenOpts?: string;
}

export interface MavenBenchReport {
  project: string;
  artifacts: number;
  matchesMaven: boolean;
  readerFromHttpCacheMs: number[];
  readerFromLocalRepositoryMs: number[];
  mvnOfflineMs: number[];
  mavenOpts?: string;
}

function runMvnOffline(dir: string, mavenOpts: string | undefined): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(
      "mvn",
      [
        "-B",
        "-q",
        "-o",
        `-Dmaven.repo.local=${ORACLE_REPOSITORY}`,
        "org.apache.maven.plugins:maven-dependency-plugin:3.6.1:list",
        `-DoutputFile=${join(os.tmpdir(), "bench-mvn-dependency-list.txt")}`,
      ],
      {
        cwd: dir,
        stdio: "ignore",
        env: mavenOpts === undefined ? process.env : { ...process.env, MAVEN_OPTS: mavenOpts },
      },
    );
    child.on("error", reject);
    child.on("close", (code) =>
      code === 0 ? resolve(performance.now() - started) : reject(new Error(`mvn -o exited with ${code}`)),
    );
  });
}

export async function benchMavenScan(options: MavenBenchOptions): Promise<MavenBenchReport> {
  const source = options.pomXml ? { pomXml: options.pomXml } : { coordinates: options.coordinates ?? "" };
  const { dir, pom } = await projectDir(options.name, source);
  const oracle = (await mvnDependencyList(dir)).get("") ?? [];
  const emptyLocal = await mkdtemp(join(os.tmpdir(), "bench-empty-m2-"));
  try {
    const context = (localRepository: string): ReaderContext => ({
      root: dir,
      fetcher: createRegistryFetcher({ cacheDir: SCANNER_HTTP_CACHE, offline: false }),
      offline: false,
      npmRegistryUrl: "https://registry.npmjs.org",
      mavenRepositoryUrl: CENTRAL,
      mavenLocalRepository: localRepository,
      progress: () => {},
    });
    // warm-up: fills the HTTP cache on a first run, and checks the answer
    const warm = await mavenReader.read([pom], context(emptyLocal));
    const ours = new Set(warm.packages.map((p) => `${p.name}@${p.version}`));
    const theirs = new Set(oracle.map((a) => `${a.groupId}:${a.artifactId}@${a.version}`));
    const matchesMaven = ours.size === theirs.size && [...ours].every((k) => theirs.has(k));

    const time = async (localRepository: string) => {
      const started = performance.now();
      await mavenReader.read([pom], context(localRepository));
      return performance.now() - started;
    };
    const readerFromHttpCacheMs: number[] = [];
    const readerFromLocalRepositoryMs: number[] = [];
    for (let i = 0; i < options.iterations; i++) {
      readerFromHttpCacheMs.push(await time(emptyLocal));
      readerFromLocalRepositoryMs.push(await time(ORACLE_REPOSITORY));
    }
    const mvnOfflineMs: number[] = [];
    for (let i = 0; i < options.mvnRuns; i++) mvnOfflineMs.push(await runMvnOffline(dir, options.mavenOpts));
    return {
      project: options.name,
      artifacts: oracle.length,
      matchesMaven,
      readerFromHttpCacheMs,
      readerFromLocalRepositoryMs,
      mvnOfflineMs,
      ...(options.mavenOpts === undefined ? {} : { mavenOpts: options.mavenOpts }),
    };
  } finally {
    await rm(emptyLocal, { recursive: true, force: true });
  }
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};
const ms = (values: number[]) =>
  values.length === 0
    ? "—"
    : `${Math.round(median(values))} ms (min ${Math.round(Math.min(...values))}, max ${Math.round(Math.max(...values))})`;

export function reportMarkdown(report: MavenBenchReport): string {
  const cpu = os.cpus()[0]?.model ?? "unknown CPU";
  return [
    `Project: \`${report.project}\`, ${report.artifacts} artifacts resolved by Maven; the reader's packages ${
      report.matchesMaven ? "are exactly Maven's" : "DIFFER from Maven's"
    }. Machine: ${os.availableParallelism()} × ${cpu}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node.js ${process.version}.`,
    "",
    "| what (warm caches) | runs | wall time, median |",
    "|---|---|---|",
    `| \`mavenReader.read\`, local repository empty: every POM from the scanner's HTTP cache | ${report.readerFromHttpCacheMs.length} | ${ms(report.readerFromHttpCacheMs)} |`,
    `| \`mavenReader.read\`, Maven's filled local repository read first | ${report.readerFromLocalRepositoryMs.length} | ${ms(report.readerFromLocalRepositoryMs)} |`,
    `| \`mvn -B -q -o dependency:list\` (Maven 3.8.7, new JVM per run${report.mavenOpts ? `, MAVEN_OPTS=${report.mavenOpts}` : ""}) | ${report.mvnOfflineMs.length} | ${ms(report.mvnOfflineMs)} |`,
  ].join("\n");
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const iterations = Number(process.env.BENCH_MAVEN_ITERATIONS ?? 7);
  const mvnRuns = Number(process.env.BENCH_MAVEN_MVN_RUNS ?? 3);
  const report = await benchMavenScan({
    name: "bench-search-service",
    pomXml: BENCH_PROJECT,
    iterations,
    mvnRuns,
  });
  process.stdout.write(`${reportMarkdown(report)}\n`);
  if (!report.matchesMaven) process.exitCode = 1;
}
