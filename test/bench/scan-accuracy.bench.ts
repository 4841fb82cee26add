/**
 * Accuracy of the scanner on software nobody here wrote (npm run bench:scan:accuracy, issue 28 point 3):
 * the evaluation corpus of test/support/corpus (real npm applications and Maven artifacts fetched from the
 * registries, cached under ~/.cache/imaging-ci), scanned by `imaging scan --output` as a user does and by
 * the peers users would pick instead (cdxgen, Syft), on the same inputs. Per subject and in total:
 *
 * - inventory precision/recall of each tool against the package manager's own answer (`npm ls --all`
 *   after `npm ci` of the subject's lockfile; `mvn dependency:list`, scopes compile and runtime);
 * - our inventory against each peer's (how far we agree: precision = ours the peer also lists);
 * - for jars, recall of the external objects javap shows the jar's classes use (all, and methods alone),
 *   attributed to the resolved dependency jars (test/support/javap-oracle.ts);
 * - wall time of our scan and of cdxgen's, side by side in the same run.
 *
 * Environment: BENCH_ACCURACY_SUBJECTS (comma-separated subject ids; default all), BENCH_ACCURACY_PEERS
 * (`cdxgen,syft`, default both; `none` for none). Prints a Markdown report (docs/benchmarks.md keeps the
 * recorded one).
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { AnalysisDocument } from "../../src/scanner/analysis-document.ts";
import { mavenVersions } from "../../src/scanner/facts/maven.ts";
import { createRegistryFetcher } from "../../src/scanner/registry/cached-fetch.ts";
import { CLI } from "../support/cli.ts";
import {
  JAVA_CORPUS,
  type JavaCorpusSubject,
  javaCorpusSubject,
  javaOracle,
  subjectDir,
} from "../support/corpus/java-corpus.ts";
import { NPM_CORPUS, npmCorpusSubject, npmOracle } from "../support/corpus/npm-corpus.ts";
import { type PeerRun, runCdxgen, runSyft, syft, timed } from "../support/corpus/peers.ts";
import { extractClasses } from "../support/java-subjects.ts";
import { javapMethods, oracleClassOwners, oracleReferences } from "../support/javap-oracle.ts";
import {
  CENTRAL,
  ORACLE_REPOSITORY,
  SCANNER_HTTP_CACHE,
  SUBJECTS_DIR,
  shareScannerHttpCache,
} from "../support/maven-subjects.ts";

const SELF = fileURLToPath(import.meta.url);

export interface Score {
  /** Size of the reference answer, of the tool's answer, and of both. */
  expected: number;
  found: number;
  both: number;
}

export interface ToolResult {
  ms: number;
  vsOracle: Score;
  error?: string;
  /** A few of the differences with the oracle, to read. */
  missed: string[];
  extra: string[];
}

export interface SubjectResult {
  id: string;
  ecosystem: "npm" | "maven";
  kind: string;
  oracle: number;
  ours: ToolResult;
  peers: Record<string, ToolResult>;
  /** Our inventory against each peer's (the peer's answer taken as the reference). */
  oursVsPeer: Record<string, Score>;
  /** javap's references (all kinds, then methods alone) the document has too. */
  objects?: { all: Score; methods: Score };
  /** npm: references to a package the document lists at several versions, and the version they name. */
  versions?: VersionScore;
  /** Maven: the release date the platform records for the subject's own version, and its source. */
  released?: { at: string | null; source: string | null };
}

/**
 * Per-version object precision: of the references whose object belongs to a package the application
 * holds at several versions, those naming the version Node.js loads from the referring file's folder
 * (the corpus oracle's `resolution`, computed on the installed tree).
 */
export interface VersionScore {
  checked: number;
  right: number;
  /** A few wrong ones: `file → package@version named (loaded: version)`. */
  wrong: string[];
}

export interface AccuracyReport {
  subjects: SubjectResult[];
  peers: string[];
  unavailable: Record<string, string>;
  machine: string;
}

export interface AccuracyOptions {
  /** Subject ids to run (all when undefined). */
  subjects?: readonly string[];
  peers: readonly ("cdxgen" | "syft")[];
  /** Called as each subject is done (a long run shows its progress). */
  onSubject?: (result: SubjectResult) => void;
}

const score = (expected: Set<string>, found: Set<string>): Score => ({
  expected: expected.size,
  found: found.size,
  both: [...found].filter((x) => expected.has(x)).length,
});

export const precision = (s: Score) => (s.found === 0 ? (s.expected === 0 ? 1 : 0) : s.both / s.found);
export const recall = (s: Score) => (s.expected === 0 ? 1 : s.both / s.expected);

/** The subject itself: `name@version` (npm), or any version of its `groupId:artifactId` (Maven modules). */
const isOwn = (own: Set<string>, id: string) => own.has(id) || own.has(id.slice(0, id.lastIndexOf("@")));

const diff = (a: Set<string>, b: Set<string>) => [...a].filter((x) => !b.has(x)).slice(0, 5);

function tool(run: PeerRun, oracle: Set<string>): ToolResult {
  return {
    ms: run.ms,
    vsOracle: score(oracle, run.packages),
    missed: diff(oracle, run.packages),
    extra: diff(run.packages, oracle),
    ...(run.error ? { error: run.error } : {}),
  };
}

interface OurRun extends PeerRun {
  document?: AnalysisDocument;
}

/**
 * Maven scopes the oracle leaves out (`mvn dependency:list` kept to compile and runtime): our packages of
 * these scopes are left out too, so that a project's test dependencies, which we list as such, are
 * compared like for like. Peers record no Maven scope and are taken whole.
 */
const OFF_CLASS_PATH = new Set(["test", "provided", "system"]);

/** `imaging scan --output` in its own process, with the registry cache shared by the suite's scans. */
async function runOurs(
  input: string,
  ecosystem: "npm" | "maven",
  work: string,
  own: Set<string>,
): Promise<OurRun> {
  const dataDir = join(work, "data");
  mkdirSync(dataDir, { recursive: true });
  shareScannerHttpCache(dataDir);
  const out = join(work, "imaging.analysis.json");
  const r = await timed(
    process.execPath,
    [CLI, "scan", input, "--app", "corpus", "--output", out, "--json", "--data-dir", dataDir],
    { MAVEN_LOCAL_REPOSITORY: ORACLE_REPOSITORY, DATABASE_URL: "" },
  );
  if (r.code !== 0)
    return { ms: r.ms, packages: new Set(), error: `imaging scan exited ${r.code}: ${r.stderr.slice(-300)}` };
  const document = JSON.parse(readFileSync(out, "utf8")) as AnalysisDocument;
  const packages = new Set(
    document.packages
      .filter((p) => p.ecosystem === ecosystem && !OFF_CLASS_PATH.has(p.scope ?? ""))
      .map((p) => `${p.name}@${p.version}`)
      .filter((id) => !isOwn(own, id)),
  );
  return { ms: r.ms, packages, document };
}

async function runPeers(
  options: AccuracyOptions,
  input: string,
  ecosystem: "npm" | "maven",
  work: string,
  own: Set<string>,
  syftBin: string | undefined,
): Promise<Record<string, PeerRun>> {
  const peers: Record<string, PeerRun> = {};
  const drop = (run: PeerRun) => {
    for (const id of run.packages) if (isOwn(own, id)) run.packages.delete(id);
    return run;
  };
  if (options.peers.includes("cdxgen"))
    peers.cdxgen = drop(await runCdxgen(input, ecosystem, join(work, "cdxgen.cdx.json")));
  if (options.peers.includes("syft") && syftBin)
    peers.syft = drop(await runSyft(syftBin, input, ecosystem, join(work, "syft.cdx.json")));
  return peers;
}

/** javap's external references of the jar's own classes, in the analysis document's terms. */
async function javapOracle(
  s: JavaCorpusSubject,
  artifact: string,
  runtime: Set<string>,
): Promise<Set<string>> {
  const dir = subjectDir(s);
  const classesDir = join(dir, "classes");
  await extractClasses(artifact, classesDir);
  const classFiles = readdirSync(classesDir, { recursive: true, encoding: "utf8" })
    .filter(
      (f) => f.endsWith(".class") && !/(?:module|package)-info\.class$/.test(f) && !f.startsWith("META-INF/"),
    )
    .sort();
  const methods = await javapMethods(classesDir, classFiles, join(dir, "javap-oracle.json"));
  const owners = await oracleClassOwners(
    join(dir, "oracle", "mvn-dependency-list.txt"),
    join(dir, "dependency-classes.json"),
  );
  const packages = new Set([...runtime].map((id) => `maven:${id.slice(0, id.lastIndexOf("@"))}`));
  // only references to what is on the runtime class path (test-scoped jars are listed by Maven too)
  return new Set(
    [...oracleReferences(methods, owners)].filter((line) => packages.has(line.split("|")[2] ?? "")),
  );
}

export function objectVersions(
  document: AnalysisDocument,
  resolution: Record<string, Record<string, string>>,
): VersionScore {
  const versions = new Map<string, Set<string>>();
  for (const p of document.packages) {
    const key = `${p.ecosystem}:${p.name}`;
    versions.set(key, (versions.get(key) ?? new Set()).add(p.version));
  }
  const objects = new Map(document.objects.map((o) => [o.id, o]));
  const score: VersionScore = { checked: 0, right: 0, wrong: [] };
  for (const r of document.references) {
    const o = objects.get(r.to);
    const file = /^\[([^\]]+)\]/.exec(r.from.fullName)?.[1];
    if (!o || !file || (versions.get(o.package)?.size ?? 0) < 2) continue;
    const name = o.package.replace(/^npm:/, "");
    const folder = file.includes("/") ? file.slice(0, file.lastIndexOf("/")) : "";
    const loaded = resolution[folder]?.[name];
    score.checked++;
    if (o.version !== undefined && o.version === loaded) score.right++;
    else if (score.wrong.length < 5) {
      score.wrong.push(`${file} → ${name}@${o.version ?? "?"} (loaded: ${loaded ?? "none"})`);
    }
  }
  return score;
}

/**
 * The release date the platform's facts give `groupId:artifactId:version` (what a scan records), looked up
 * through the suite's shared registry cache. Reported, not scored: no independent record of release
 * dates is reachable here (Central's search API is not).
 */
async function releaseDate(coordinates: string): Promise<SubjectResult["released"]> {
  const [groupId, artifactId, version] = coordinates.split(":");
  const fetcher = createRegistryFetcher({ cacheDir: SCANNER_HTTP_CACHE, offline: false });
  const lookup = await mavenVersions(fetcher, CENTRAL, `${groupId}:${artifactId}`);
  if (lookup.kind !== "ok") return { at: null, source: null };
  const found = lookup.versions.find((v) => v.version === version);
  return { at: found?.releasedAt ?? null, source: found?.releasedAtSource ?? null };
}

function documentReferences(document: AnalysisDocument): Set<string> {
  const objects = new Map(document.objects.map((o) => [o.id, o]));
  const lines = new Set<string>();
  for (const r of document.references) {
    const o = objects.get(r.to);
    if (o)
      lines.add(`${r.from.fullName}|${r.from.typeId}|${o.package}|${o.typeId}|${o.fullName}|${o.mangling}`);
  }
  return lines;
}

export async function benchScanAccuracy(options: AccuracyOptions): Promise<AccuracyReport> {
  const wanted = (id: string) => options.subjects === undefined || options.subjects.includes(id);
  const unavailable: Record<string, string> = {};
  let syftBin: string | undefined;
  if (options.peers.includes("syft")) {
    const found = syft();
    syftBin = found.bin;
    if (found.unavailable) unavailable.syft = found.unavailable;
  }
  const peers = options.peers.filter((p) => !unavailable[p]);
  const runs = join(SUBJECTS_DIR, "corpus", "runs");
  mkdirSync(runs, { recursive: true });
  const subjects: SubjectResult[] = [];
  for (const s of NPM_CORPUS.filter((x) => wanted(x.id))) {
    const dir = npmCorpusSubject(s);
    const npmAnswer = npmOracle(dir);
    const oracle = npmAnswer.all;
    const manifest = JSON.parse(readFileSync(join(dir, "app", "package.json"), "utf8")) as {
      name: string;
      version: string;
    };
    // the application at its own version only: eslint's tree holds another eslint (a plugin's peer)
    const own = new Set([`${manifest.name}@${manifest.version}`]);
    const work = mkdtempSync(join(runs, `${s.id}-`));
    try {
      const ours = await runOurs(join(dir, "app"), "npm", work, own);
      const peerRuns = await runPeers(options, join(dir, "app"), "npm", work, own, syftBin);
      const r = result(s.id, "npm", "npm application", oracle, ours, peerRuns);
      if (ours.document) r.versions = objectVersions(ours.document, npmAnswer.resolution);
      subjects.push(r);
      options.onSubject?.(r);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }
  for (const s of JAVA_CORPUS.filter((x) => wanted(x.id))) {
    const prepared = await javaCorpusSubject(s);
    const oracle = javaOracle(s, prepared);
    const own = new Set(s.coordinates.map((c) => c.split(":").slice(0, 2).join(":")));
    const work = mkdtempSync(join(runs, `${s.id}-`));
    try {
      // One artifact is scanned by itself, as a user scans a jar or war they downloaded (`imaging scan x.jar`):
      // our scanner then resolves its POM as the application's. A folder holding a jar is a folder of
      // libraries, each named, none resolved. The peers get the folder, as their documentation shows.
      const ours = await runOurs(prepared.artifact ?? prepared.input, "maven", work, own);
      const peerRuns = await runPeers(options, prepared.input, "maven", work, own, syftBin);
      const r = result(s.id, "maven", s.kind, oracle, ours, peerRuns);
      r.released = await releaseDate(s.coordinates[0] as string);
      if (s.javap && prepared.artifact) {
        const expected = await javapOracle(s, prepared.artifact, oracle);
        const found = ours.document ? documentReferences(ours.document) : new Set<string>();
        const methods = (set: Set<string>) =>
          new Set([...set].filter((l) => l.split("|")[3] === "JV_METHOD"));
        r.objects = { all: score(expected, found), methods: score(methods(expected), methods(found)) };
      }
      subjects.push(r);
      options.onSubject?.(r);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }
  return {
    subjects,
    peers,
    unavailable,
    machine: `${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, load ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")}, Node ${process.version}`,
  };
}

function result(
  id: string,
  ecosystem: "npm" | "maven",
  kind: string,
  oracle: Set<string>,
  ours: OurRun,
  peers: Record<string, PeerRun>,
): SubjectResult {
  const out: SubjectResult = {
    id,
    ecosystem,
    kind,
    oracle: oracle.size,
    ours: tool(ours, oracle),
    peers: {},
    oursVsPeer: {},
  };
  for (const [name, run] of Object.entries(peers)) {
    out.peers[name] = tool(run, oracle);
    out.oursVsPeer[name] = score(run.packages, ours.packages);
  }
  return out;
}

const sum = (scores: Score[]): Score => ({
  expected: scores.reduce((n, s) => n + s.expected, 0),
  found: scores.reduce((n, s) => n + s.found, 0),
  both: scores.reduce((n, s) => n + s.both, 0),
});

const pct = (x: number) => `${(x * 100).toFixed(1)}`;
const pr = (s: Score | undefined) => (s ? `${pct(precision(s))} / ${pct(recall(s))}` : "–");
const versionCell = (v: VersionScore | undefined) =>
  v === undefined ? "–" : v.checked === 0 ? "– of 0" : `${pct(v.right / v.checked)} of ${v.checked}`;
const secs = (ms: number | undefined) => (ms === undefined ? "–" : (ms / 1000).toFixed(1));

/** Totals over the subjects of one ecosystem (undefined for none). */
export function totals(report: AccuracyReport, ecosystem: "npm" | "maven") {
  const subjects = report.subjects.filter((s) => s.ecosystem === ecosystem);
  if (subjects.length === 0) return undefined;
  const peers: Record<string, Score> = {};
  const vsPeers: Record<string, Score> = {};
  for (const p of report.peers) {
    peers[p] = sum(subjects.flatMap((s) => (s.peers[p] ? [s.peers[p].vsOracle] : [])));
    vsPeers[p] = sum(subjects.flatMap((s) => (s.oursVsPeer[p] ? [s.oursVsPeer[p]] : [])));
  }
  const withObjects = subjects.filter((s) => s.objects);
  const withVersions = subjects.flatMap((s) => (s.versions ? [s.versions] : []));
  return {
    subjects: subjects.length,
    ours: sum(subjects.map((s) => s.ours.vsOracle)),
    peers,
    vsPeers,
    objects:
      withObjects.length === 0
        ? undefined
        : {
            all: sum(withObjects.map((s) => s.objects?.all as Score)),
            methods: sum(withObjects.map((s) => s.objects?.methods as Score)),
          },
    versions:
      withVersions.length === 0
        ? undefined
        : {
            checked: withVersions.reduce((n, v) => n + v.checked, 0),
            right: withVersions.reduce((n, v) => n + v.right, 0),
            wrong: [],
          },
    oursMs: subjects.reduce((n, s) => n + s.ours.ms, 0),
    cdxgenMs: subjects.reduce((n, s) => n + (s.peers.cdxgen?.ms ?? 0), 0),
  };
}

export function reportMarkdown(r: AccuracyReport): string {
  const peerCols = r.peers.flatMap((p) => [`${p} P / R`, `ours vs ${p} P / R`]);
  const lines = [
    `Machine: ${r.machine}.`,
    "",
    ...Object.entries(r.unavailable).map(([p, why]) => `Peer ${p} not run: ${why}.`),
    "Precision / recall in %, against the package manager's answer unless said; times are wall seconds.",
    "",
    `| subject | kind | oracle | ours P / R | ${peerCols.map((c) => `${c} | `).join("")}javap refs R (methods R) | object versions P | ours s | cdxgen s |`,
    `|---|---|---:|---:|${peerCols.map(() => "---:|").join("")}---:|---:|---:|---:|`,
  ];
  for (const s of r.subjects) {
    const cells = r.peers.flatMap((p) => [pr(s.peers[p]?.vsOracle), pr(s.oursVsPeer[p])]);
    const objects = s.objects
      ? `${pct(recall(s.objects.all))} (${pct(recall(s.objects.methods))}) of ${s.objects.all.expected}`
      : "–";
    lines.push(
      `| ${s.id} | ${s.kind} | ${s.oracle} | ${s.ours.error ? "error" : pr(s.ours.vsOracle)} | ${cells.map((c) => `${c} | `).join("")}${objects} | ${versionCell(s.versions)} | ${secs(s.ours.ms)} | ${secs(s.peers.cdxgen?.ms)} |`,
    );
  }
  for (const ecosystem of ["npm", "maven"] as const) {
    const t = totals(r, ecosystem);
    if (!t) continue;
    const cells = r.peers.flatMap((p) => [pr(t.peers[p]), pr(t.vsPeers[p])]);
    const objects = t.objects
      ? `${pct(recall(t.objects.all))} (${pct(recall(t.objects.methods))}) of ${t.objects.all.expected}`
      : "–";
    lines.push(
      `| **total ${ecosystem}** (${t.subjects}) | | ${t.ours.expected} | ${pr(t.ours)} | ${cells.map((c) => `${c} | `).join("")}${objects} | ${versionCell(t.versions)} | ${secs(t.oursMs)} | ${secs(t.cdxgenMs)} |`,
    );
  }
  const dated = r.subjects.filter((s) => s.released);
  if (dated.length > 0) {
    lines.push(
      "",
      "Release date the platform records for each Maven subject's own version (source):",
      "",
      ...dated.map((s) => `- ${s.id}: ${s.released?.at ?? "none"} (${s.released?.source ?? "no source"})`),
    );
  }
  const notes = r.subjects.flatMap((s) => [
    ...(s.ours.error ? [`- ${s.id}: ours failed: ${s.ours.error}`] : []),
    ...Object.entries(s.peers).flatMap(([p, t]) => (t.error ? [`- ${s.id}: ${p} failed: ${t.error}`] : [])),
    ...(s.ours.missed.length > 0 ? [`- ${s.id}: ours missed e.g. ${s.ours.missed.join(", ")}`] : []),
    ...(s.ours.extra.length > 0 ? [`- ${s.id}: ours extra e.g. ${s.ours.extra.join(", ")}`] : []),
    ...(s.versions?.wrong.length
      ? [`- ${s.id}: object versions wrong e.g. ${s.versions.wrong.join(", ")}`]
      : []),
  ]);
  if (notes.length > 0) lines.push("", "Differences with the oracle (first five):", "", ...notes);
  return lines.join("\n");
}

if (process.argv[1] === SELF) {
  const subjects = process.env.BENCH_ACCURACY_SUBJECTS?.split(",").map((x) => x.trim());
  const peerList = (process.env.BENCH_ACCURACY_PEERS ?? "cdxgen,syft").split(",").map((x) => x.trim());
  const report = await benchScanAccuracy({
    ...(subjects ? { subjects } : {}),
    peers: peerList.filter((p): p is "cdxgen" | "syft" => p === "cdxgen" || p === "syft"),
    onSubject: (s) => process.stderr.write(`${JSON.stringify(s)}\n`),
  });
  process.stdout.write(`${reportMarkdown(report)}\n`);
  if (process.env.BENCH_ACCURACY_JSON) {
    const { writeFileSync } = await import("node:fs");
    writeFileSync(process.env.BENCH_ACCURACY_JSON, JSON.stringify(report, null, 2));
  }
}
