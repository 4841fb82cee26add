/**
 * Real Maven projects for the scanner's tests, and what real Maven says about them: POMs and archives are
 * downloaded from Maven Central into a cache outside the repository, and `mvn dependency:list` (Maven
 * 3.8.7, the oracle) is run once per subject with its own local repository; both are reused by later runs.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, symlinkSync } from "node:fs";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { withCacheLock } from "./cache-lock.ts";

export const CENTRAL = process.env.MAVEN_REPOSITORY_URL ?? "https://repo.maven.apache.org/maven2";
export const SUBJECTS_DIR =
  process.env.IMAGING_SCAN_SUBJECTS ?? join(homedir(), ".cache", "imaging-ci", "scan-subjects");
export const MAVEN_SUBJECTS_DIR = join(SUBJECTS_DIR, "maven");
/** The local repository Maven filled while computing the oracle answers. */
export const ORACLE_REPOSITORY = join(MAVEN_SUBJECTS_DIR, "m2");
/** The scanner's HTTP cache for these tests (what it fetched from Central once). */
export const SCANNER_HTTP_CACHE = join(MAVEN_SUBJECTS_DIR, "http-cache");
/** Its kept answers (jars' packaging times, identities): what no HTTP cache keeps. */
const SCANNER_ANSWERS = join(MAVEN_SUBJECTS_DIR, "answers");

/**
 * Gives a fresh data directory SCANNER_HTTP_CACHE as its registry cache (`<dataDir>/cache/http`, a
 * symbolic link, so dropping the data directory leaves the cache): what a long-running platform or CI
 * runner keeps between analyses. Immutable answers (release POMs, their signatures: one per published
 * version for Maven release dates, about 15,000 for solr-core) are then fetched from Central once for
 * the whole suite instead of once per run; maven-metadata.xml is still revalidated with Central. The
 * kept answers (`<dataDir>/cache/answers`: each version's jar packaging time, read by a ranged request
 * no HTTP cache keeps) are shared the same way.
 */
export function shareScannerHttpCache(dataDir: string): void {
  mkdirSync(SCANNER_HTTP_CACHE, { recursive: true });
  mkdirSync(SCANNER_ANSWERS, { recursive: true });
  mkdirSync(join(dataDir, "cache"), { recursive: true });
  symlinkSync(SCANNER_HTTP_CACHE, join(dataDir, "cache", "http"));
  symlinkSync(SCANNER_ANSWERS, join(dataDir, "cache", "answers"));
}

const DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.6.1:list";

export interface OracleArtifact {
  groupId: string;
  artifactId: string;
  type: string;
  classifier: string;
  version: string;
  scope: string;
  optional: boolean;
}

export const oracleLine = (a: OracleArtifact): string =>
  `${a.groupId}:${a.artifactId}:${a.type}${a.classifier ? `:${a.classifier}` : ""}:${a.version}:${a.scope}${
    a.optional ? " (optional)" : ""
  }`;

async function download(url: string, path: string): Promise<void> {
  if (existsSync(path)) return;
  const response = await fetch(url);
  if (!response.ok) throw new Error(`test setup: ${url} answered HTTP ${response.status}`);
  await mkdir(dirname(path), { recursive: true });
  // a part file of this process's own: test files running in parallel may fetch the same file
  const part = `${path}.${process.pid}.part`;
  await writeFile(part, Buffer.from(await response.arrayBuffer()));
  await rename(part, path);
}

const repositoryPath = (groupId: string, artifactId: string, version: string, extension: string) =>
  `${groupId.replaceAll(".", "/")}/${artifactId}/${version}/${artifactId}-${version}.${extension}`;

/** A published artifact file (pom, jar, war), downloaded once. */
export async function centralFile(coordinates: string, extension: string): Promise<string> {
  const [groupId = "", artifactId = "", version = ""] = coordinates.split(":");
  const path = join(MAVEN_SUBJECTS_DIR, "files", repositoryPath(groupId, artifactId, version, extension));
  await download(`${CENTRAL}/${repositoryPath(groupId, artifactId, version, extension)}`, path);
  return path;
}

/** A project directory holding a published POM as its pom.xml (or the given POM text). */
export async function projectDir(name: string, source: { coordinates: string } | { pomXml: string }) {
  const dir = join(MAVEN_SUBJECTS_DIR, "projects", name);
  const pom = join(dir, "pom.xml");
  if ("pomXml" in source) {
    await mkdir(dir, { recursive: true });
    const current = existsSync(pom) ? await readFile(pom, "utf8") : undefined;
    if (current !== source.pomXml) await writeFile(pom, source.pomXml);
  } else if (!existsSync(pom)) {
    await mkdir(dir, { recursive: true });
    await writeFile(pom, await readFile(await centralFile(source.coordinates, "pom")));
  }
  return { dir, pom };
}

function run(command: string, args: string[], cwd: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (d) => {
      output += d;
    });
    child.stderr.on("data", (d) => {
      output += d;
    });
    child.on("error", (error) =>
      reject(new Error(`test setup: cannot run ${command} (${error.message}); .ci/run installs Maven`)),
    );
    child.on("close", (code) => resolve({ code: code ?? 1, output }));
  });
}

export function parseDependencyList(text: string): OracleArtifact[] {
  return text
    .split("\n")
    .filter((line) => line.startsWith("   ") && line.trim() !== "none")
    .map((line) => {
      const entry = line.trim().replace(/ -- module .*$/, "");
      const optional = entry.endsWith(" (optional)");
      const parts = entry.replace(/ \(optional\)$/, "").split(":");
      const [groupId = "", artifactId = "", type = ""] = parts;
      const [classifier, version, scope] =
        parts.length === 6
          ? [parts[3] ?? "", parts[4] ?? "", parts[5] ?? ""]
          : ["", parts[3] ?? "", parts[4] ?? ""];
      return { groupId, artifactId, type, classifier, version, scope, optional };
    });
}

/**
 * What `mvn dependency:list` resolves for the project in `dir` (computed once, then read from
 * `mvn-dependency-list.txt`). `goals` run before the listing (`compile` lets a reactor resolve its modules).
 * Every module's list for a reactor, keyed by the module directory relative to `dir` ("" for the root).
 */
export async function mvnDependencyList(dir: string, modules: string[] = [""], goals: string[] = []) {
  const outputs = modules.map((m) => join(dir, m, "mvn-dependency-list.txt"));
  if (!outputs.every(existsSync))
    await withCacheLock(join(dir, "mvn"), () => runDependencyList(dir, outputs, goals));
  const lists = new Map<string, OracleArtifact[]>();
  for (const [i, m] of modules.entries()) {
    lists.set(m, parseDependencyList(await readFile(outputs[i] as string, "utf8")));
  }
  return lists;
}

/** Runs Maven's listing once (under the project's lock; another test process may have run it meanwhile). */
async function runDependencyList(dir: string, outputs: string[], goals: string[]): Promise<void> {
  if (!outputs.every(existsSync)) {
    const { code, output } = await run(
      "mvn",
      [
        "-B",
        "-q",
        `-Dmaven.repo.local=${ORACLE_REPOSITORY}`,
        ...goals,
        DEPENDENCY_PLUGIN,
        "-DoutputFile=mvn-dependency-list.txt.part",
        "-DoutputScope=true",
      ],
      dir,
    );
    if (code !== 0)
      throw new Error(`test setup: mvn dependency:list failed in ${dir}:\n${output.slice(-3000)}`);
    for (const output of outputs) await rename(`${output}.part`, output);
  }
}

/** Runs `mvn dependency:list` expecting it to fail; returns Maven's output (cached). */
export async function mvnDependencyListFailure(dir: string): Promise<string> {
  const cached = join(dir, "mvn-failure.txt");
  if (existsSync(cached)) return readFile(cached, "utf8");
  return withCacheLock(join(dir, "mvn"), async () => {
    if (existsSync(cached)) return readFile(cached, "utf8");
    const { code, output } = await run(
      "mvn",
      ["-B", `-Dmaven.repo.local=${ORACLE_REPOSITORY}`, DEPENDENCY_PLUGIN],
      dir,
    );
    if (code === 0) throw new Error(`test setup: mvn dependency:list was expected to fail in ${dir}`);
    await writeFile(cached, output);
    return output;
  });
}
