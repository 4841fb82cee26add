/**
 * Deterministic generator of a large analysis store for the occurrences benchmark.
 *
 * The data set is a pure function of BENCH_SPEC and the seed: npm-like packages `pkg-00001`.. with
 * 8-15 published versions, 1,000 advisories at full scale (a few "wide" ones affecting thousands of the
 * application's packages), one application using every package, ~100 external objects per package, each referred to by
 * at least one application object, and 5 analyses where each one changes a few percent of the previous
 * (upgrades, objects added/removed/changed, references re-pointed/added/removed).
 *
 * It is written through the store's own write path: loadAdvisory, loadPublishedVersions and
 * ingestAnalysis (the latter stores every analysis as a diff with validity intervals).
 *
 * Stores are cached, keyed by GENERATOR_KEY (GENERATOR_VERSION and a hash of the write path's sources, so
 * that a change of the store code regenerates them):
 *  - SQLite: .bench-data/sqlite-<key>/imaging.db (+ meta.json, written last);
 *  - PostgreSQL: database `imaging_bench` on BENCH_POSTGRES_URL's server, marked complete by a row in
 *    its table `bench_meta`; dropped and recreated when the key differs.
 *
 * CLI: node --max-old-space-size=8192 test/bench/generate-store.ts <sqlite|postgres> [--force]
 * prints progress on stderr and one line `BENCH_STORE <json>` on stdout.
 */

import { createHash } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { type LogEvent, sql } from "kysely";
import pg from "pg";
import { ingestAnalysis, loadAdvisory, loadPublishedVersions } from "../../src/domain/package-facts.ts";
import { type AffectedRange, isAffected } from "../../src/domain/versions/index.ts";
import { openStore, type StoreHandle } from "../../src/store/database.ts";
import type {
  AdvisoryInput,
  AnalysisInput,
  ApplicationObjectInput,
  ExternalObjectInput,
  PublishedVersionInput,
  ReferenceInput,
} from "../../src/store/input-records.ts";
import { dropDatabase } from "../support/stores.ts";

/** Bump whenever the data set or the way it is written changes: caches keyed by it are regenerated. */
export const GENERATOR_VERSION = 2;

const SCALE = Number(process.env.BENCH_SCALE ?? "1");
if (!(SCALE > 0 && SCALE <= 1))
  throw new Error(`BENCH_SCALE must be in (0, 1], got ${process.env.BENCH_SCALE}`);

export const BENCH_SPEC = {
  seed: 20_240_501,
  /** Packages, all used by the application. */
  packages: Math.round(20_000 * SCALE),
  /**
   * 1,000 at full scale. Reduced scales have as many per package, at least 100: the test suite's tiny
   * runs (100 and 40 packages) wrote the full 1,000 through loadAdvisory, one PostgreSQL round trip at a
   * time, which took most of their generation and proved nothing more about the benchmark.
   */
  advisories: Math.max(100, Math.round(1_000 * SCALE)),
  /** Wide advisories: each covers every 6th package (3,333 of 20,000), ~90% affected at analysis 1. */
  wideAdvisories: 3,
  wideEvery: 6,
  /** External objects per package: uniform in [min, max] (mean 100). */
  objectsPerPackage: [80, 120] as const,
  applicationObjects: Math.round(200_000 * SCALE),
  analyses: 5,
  analysisDates: [
    "2024-01-15T08:00:00.000Z",
    "2024-02-15T08:00:00.000Z",
    "2024-03-15T08:00:00.000Z",
    "2024-04-15T08:00:00.000Z",
    "2024-05-15T08:00:00.000Z",
  ],
  /** Between analyses 2 and 3: selects analysis 2. */
  dateBetween2And3: "2024-03-01T00:00:00Z",
  /** Share of packages / objects touched by each analysis after the first. */
  churn: { upgrades: 0.03, removedObjects: 0.01, addedObjects: 0.01, changedObjects: 0.005, repointed: 0.01 },
  application: "bench-app",
  scale: SCALE,
} as const;

export const ROOT = resolve(fileURLToPath(new URL("../..", import.meta.url)));

/**
 * The sources of the write path: a store written by other code is not the store this code would write
 * (statistics, indexes, derived facts), so the cache key includes their content.
 */
const WRITE_PATH = [
  "src/store/batch.ts",
  "src/store/clock.ts",
  "src/store/catalog.ts",
  "src/store/database.ts",
  "src/store/ingest.ts",
  "src/store/occurrence-model.ts",
  "src/store/advisories.ts",
  "src/store/node-sqlite-dialect.ts",
  "src/store/schema.ts",
  "src/store/migrations",
  "src/store/input-records.ts",
  "src/store/package-facts.ts",
  "src/domain/package-facts.ts",
  "src/domain/versions",
  "test/bench/generate-store.ts",
];

function writePathHash(): string {
  const hash = createHash("sha256");
  const add = (path: string) => {
    const full = join(ROOT, path);
    if (!existsSync(full)) return;
    if (statSync(full).isDirectory()) {
      for (const entry of readdirSync(full).sort()) add(join(path, entry));
    } else {
      hash.update(path).update("\0").update(readFileSync(full)).update("\0");
    }
  };
  for (const path of WRITE_PATH) add(path);
  return hash.digest("hex").slice(0, 8);
}

const SCALE_SUFFIX = SCALE === 1 ? "" : `-scale${SCALE}`;
export const GENERATOR_KEY = `v${GENERATOR_VERSION}-${writePathHash()}${SCALE_SUFFIX}`;
/** BENCH_DATA_DIR: another cache directory (the test suite's tiny run uses its own). */
export const BENCH_DATA_DIR = process.env.BENCH_DATA_DIR ?? join(ROOT, ".bench-data");
export const SQLITE_DIR = join(BENCH_DATA_DIR, `sqlite-${GENERATOR_KEY}`);
export const POSTGRES_ADMIN_URL =
  process.env.BENCH_POSTGRES_URL ?? "postgres://imaging:imaging@127.0.0.1:5432/postgres";
/**
 * Reduced scales (for trying the benchmark out) use their own database, keeping the full-size one;
 * BENCH_POSTGRES_DATABASE names another (a second checkout on the same server must not drop this one).
 */
export const POSTGRES_DATABASE =
  process.env.BENCH_POSTGRES_DATABASE ?? (SCALE === 1 ? "imaging_bench" : "imaging_bench_small");
if (!/^[a-z_][a-z0-9_]*$/.test(POSTGRES_DATABASE))
  throw new Error(`BENCH_POSTGRES_DATABASE must be a plain lower-case identifier, got ${POSTGRES_DATABASE}`);

export function benchPostgresUrl(): string {
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${POSTGRES_DATABASE}`;
  return url.toString();
}

// ---------------------------------------------------------------------------------------------------
// Deterministic model
// ---------------------------------------------------------------------------------------------------

/** mulberry32: small, fast, good enough for synthetic data; same sequence on every machine. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const pad = (n: number, width: number) => String(n).padStart(width, "0");
const DAY = 86_400_000;

interface PackageModel {
  name: string;
  versions: PublishedVersionInput[];
  /** Version index used by analysis 1. */
  firstUsed: number;
}

interface AdvisoryModel {
  input: AdvisoryInput;
  /** Indexes of the packages it names, with their ranges. */
  packages: { index: number; ranges: AffectedRange[] }[];
  wide: boolean;
}

export interface BenchFacts {
  application: string;
  generatorKey: string;
  analyses: { seq: number; analyzedAt: string }[];
  dateBetween2And3: string;
  /** The wide CVE the latency matrix queries. */
  wideCve: string;
  wideAlias: string;
  /** Expected occurrence counts (packages) of the wide CVE per analysis seq. */
  wideCounts: Record<number, number>;
  /** A narrow CVE affecting a handful of the application's packages in the latest analysis. */
  narrowCve: string;
  narrowCounts: Record<number, number>;
  counts: {
    packages: number;
    publishedVersions: number;
    advisories: number;
    applicationObjects: number;
    /** Per analysis: live external objects and references as generated. */
    perAnalysis: { seq: number; packages: number; objects: number; references: number }[];
  };
}

const GHSA_ALPHABET = "23456789cfghjmpqrvwx";
const SEVERITIES = ["CRITICAL", "HIGH", "HIGH", "MEDIUM", "MEDIUM", "MEDIUM", "LOW"] as const;

function buildPackages(rand: () => number, count: number): PackageModel[] {
  const packages: PackageModel[] = [];
  for (let i = 1; i <= count; i++) {
    const n = 8 + Math.floor(rand() * 8);
    let major = 1 + Math.floor(rand() * 3);
    let minor = 0;
    let patch = 0;
    let time = Date.UTC(2016, 0, 1) + Math.floor(rand() * 900) * DAY;
    const versions: PublishedVersionInput[] = [];
    for (let v = 0; v < n; v++) {
      if (v > 0) {
        const r = rand();
        if (r < 0.15) [major, minor, patch] = [major + 1, 0, 0];
        else if (r < 0.55) [minor, patch] = [minor + 1, 0];
        else patch += 1;
        time += (10 + Math.floor(rand() * 110)) * DAY;
      }
      versions.push({ version: `${major}.${minor}.${patch}`, releasedAt: new Date(time).toISOString() });
    }
    const firstUsed = Math.min(Math.floor(n * 0.4) + Math.floor(rand() * 3), n - 3);
    packages.push({ name: `pkg-${pad(i, 5)}`, versions, firstUsed });
  }
  return packages;
}

function ghsa(rand: () => number): string {
  const group = () =>
    Array.from({ length: 4 }, () => GHSA_ALPHABET[Math.floor(rand() * GHSA_ALPHABET.length)]).join("");
  return `GHSA-${group()}-${group()}-${group()}`;
}

function buildAdvisories(rand: () => number, packages: PackageModel[]): AdvisoryModel[] {
  const advisories: AdvisoryModel[] = [];
  const aliases = new Set<string>();
  const uniqueAlias = () => {
    for (;;) {
      const a = ghsa(rand);
      if (!aliases.has(a)) {
        aliases.add(a);
        return a;
      }
    }
  };
  for (let k = 0; k < BENCH_SPEC.advisories; k++) {
    const wide = k < BENCH_SPEC.wideAdvisories;
    const id = `CVE-2023-${pad(20_000 + k, 5)}`;
    const named: AdvisoryModel["packages"] = [];
    if (wide) {
      for (let i = k; i < packages.length; i += BENCH_SPEC.wideEvery) {
        const p = packages[i] as PackageModel;
        const next = (p.versions[p.firstUsed + 1] as PublishedVersionInput).version;
        // Mostly "fixed in the next version" (leaves when upgraded), some "introduced in the next" (joins).
        const ranges: AffectedRange[] =
          rand() < 0.9 ? [{ introduced: "0", fixed: next }] : [{ introduced: next }];
        named.push({ index: i, ranges });
      }
    } else {
      const m = 1 + Math.floor(rand() ** 3 * 20);
      const chosen = new Set<number>();
      while (chosen.size < m) chosen.add(Math.floor(rand() * packages.length));
      for (const index of [...chosen].sort((a, b) => a - b)) {
        const versions = (packages[index] as PackageModel).versions;
        const a = Math.floor(rand() * versions.length);
        const b = a + 1 + Math.floor(rand() * (versions.length - a));
        const range: AffectedRange = {
          introduced: a === 0 ? "0" : (versions[a] as PublishedVersionInput).version,
        };
        if (b < versions.length) {
          if (rand() < 0.8) range.fixed = (versions[b] as PublishedVersionInput).version;
          else range.lastAffected = (versions[b - 1] as PublishedVersionInput).version;
        }
        named.push({ index, ranges: [range] });
      }
    }
    const severity = wide ? "HIGH" : (SEVERITIES[Math.floor(rand() * SEVERITIES.length)] as string);
    const base = { CRITICAL: 9, HIGH: 7, MEDIUM: 4, LOW: 1 }[severity] ?? 4;
    const cvss = Math.round((base + rand() * (severity === "CRITICAL" ? 1 : 2.9)) * 10) / 10;
    const published = new Date(Date.UTC(2020, 0, 1) + Math.floor(rand() * 1400) * DAY).toISOString();
    const first = (packages[(named[0] as { index: number }).index] as PackageModel).name;
    advisories.push({
      wide,
      packages: named,
      input: {
        id,
        aliases: [uniqueAlias()],
        severity,
        cvssScore: cvss,
        summary: wide
          ? `Synthetic wide advisory ${id}: prototype pollution in a shared helper used by ${named.length} packages`
          : `Synthetic advisory ${id} in ${first}${named.length > 1 ? ` and ${named.length - 1} more` : ""}`,
        publishedAt: published,
        affected: named.map((n) => ({
          ecosystem: "npm",
          package: (packages[n.index] as PackageModel).name,
          ranges: n.ranges,
        })),
      },
    });
  }
  return advisories;
}

const OBJECT_TYPES = [
  ["JavaScript Function", "JS_FUNCTION"],
  ["JavaScript Method", "JS_METHOD"],
  ["JavaScript Class", "JS_CLASS"],
] as const;

/** The evolving content of the application, mutated in place from one analysis to the next. */
class ApplicationState {
  readonly used: Int16Array;
  // Objects, indexed k; grown as objects are added.
  objPkg: Int32Array;
  objLocal: Int32Array;
  objVariant: Uint8Array;
  alive: Uint8Array;
  baseSource: Int32Array;
  objectCount = 0;
  readonly nextLocal: Int32Array;
  extras: { source: number; target: number }[] = [];
  readonly sources: ApplicationObjectInput[];
  readonly packages: PackageModel[];

  constructor(packages: PackageModel[], rand: () => number) {
    this.packages = packages;
    this.used = Int16Array.from(packages.map((p) => p.firstUsed));
    this.nextLocal = new Int32Array(packages.length);
    const capacity = packages.length * 130;
    this.objPkg = new Int32Array(capacity);
    this.objLocal = new Int32Array(capacity);
    this.objVariant = new Uint8Array(capacity);
    this.alive = new Uint8Array(capacity);
    this.baseSource = new Int32Array(capacity);
    const [min, max] = BENCH_SPEC.objectsPerPackage;
    for (let i = 0; i < packages.length; i++) {
      const count = min + Math.floor(rand() * (max - min + 1));
      for (let j = 0; j < count; j++) this.addObject(i, Math.floor(rand() * BENCH_SPEC.applicationObjects));
    }
    this.sources = Array.from({ length: BENCH_SPEC.applicationObjects }, (_, m) => ({
      id: `a${m}`,
      name: `handle${m}`,
      fullName: `app.src.feature${pad(m % 700, 3)}.Controller${m % 13}.handle${m}`,
      type: "TypeScript Method",
      typeId: "TS_METHOD",
    }));
  }

  private addObject(pkg: number, source: number): void {
    const k = this.objectCount++;
    if (k >= this.objPkg.length) throw new Error("object capacity exceeded");
    this.objPkg[k] = pkg;
    const local = this.nextLocal[pkg] as number;
    this.nextLocal[pkg] = local + 1;
    this.objLocal[k] = local;
    this.objVariant[k] = 0;
    this.alive[k] = 1;
    this.baseSource[k] = source;
  }

  private randomAlive(rand: () => number): number {
    for (;;) {
      const k = Math.floor(rand() * this.objectCount);
      if (this.alive[k]) return k;
    }
  }

  /** What the next analysis sees: a few percent different from the current state. */
  evolve(rand: () => number): void {
    const churn = BENCH_SPEC.churn;
    const liveObjects = this.alive.subarray(0, this.objectCount).reduce((a, b) => a + b, 0);
    for (let n = Math.round(this.packages.length * churn.upgrades); n > 0; n--) {
      const i = Math.floor(rand() * this.packages.length);
      const used = this.used[i] as number;
      if (used < (this.packages[i] as PackageModel).versions.length - 1) this.used[i] = used + 1;
    }
    for (let n = Math.round(liveObjects * churn.removedObjects); n > 0; n--)
      this.alive[this.randomAlive(rand)] = 0;
    for (let n = Math.round(liveObjects * churn.addedObjects); n > 0; n--) {
      this.addObject(
        Math.floor(rand() * this.packages.length),
        Math.floor(rand() * BENCH_SPEC.applicationObjects),
      );
    }
    for (let n = Math.round(liveObjects * churn.changedObjects); n > 0; n--) {
      const k = this.randomAlive(rand);
      this.objVariant[k] = (this.objVariant[k] as number) + 1;
    }
    for (let n = Math.round(liveObjects * churn.repointed); n > 0; n--) {
      this.baseSource[this.randomAlive(rand)] = Math.floor(rand() * BENCH_SPEC.applicationObjects);
    }
    this.extras = this.extras.filter(() => rand() >= 0.3);
    for (let n = Math.round(liveObjects * 0.005); n > 0; n--) {
      this.extras.push({
        source: Math.floor(rand() * BENCH_SPEC.applicationObjects),
        target: this.randomAlive(rand),
      });
    }
  }

  toInput(analyzedAt: string): AnalysisInput {
    const packages = this.packages.map((p, i) => ({
      ecosystem: "npm" as const,
      name: p.name,
      version: (p.versions[this.used[i] as number] as PublishedVersionInput).version,
    }));
    const keys = this.packages.map((p) => `npm:${p.name}`);
    const objects: ExternalObjectInput[] = [];
    const references: ReferenceInput[] = [];
    const ids: (string | undefined)[] = new Array(this.objectCount);
    for (let k = 0; k < this.objectCount; k++) {
      if (!this.alive[k]) continue;
      const pkg = this.objPkg[k] as number;
      const j = this.objLocal[k] as number;
      const name = (this.packages[pkg] as PackageModel).name;
      const [type, typeId] = OBJECT_TYPES[j % 3] as (typeof OBJECT_TYPES)[number];
      const member = j % 3 === 2 ? `Widget${j}` : `fn${j}`;
      const id = `${name}#${j}`;
      ids[k] = id;
      const variant = this.objVariant[k] as number;
      objects.push({
        id,
        package: keys[pkg] as string,
        name: member,
        fullName: `${name}.lib.m${j % 7}.${member}`,
        mangling: j % 3 === 2 ? member : `${member}(${variant === 0 ? "a, b" : `a, b, opt${variant}`})`,
        type,
        typeId,
      });
      references.push({ from: this.sources[this.baseSource[k] as number] as ApplicationObjectInput, to: id });
    }
    for (const e of this.extras) {
      const to = ids[e.target];
      if (to !== undefined) references.push({ from: this.sources[e.source] as ApplicationObjectInput, to });
    }
    return { analyzedAt, packages, objects, references };
  }
}

export interface Dataset {
  packages: PackageModel[];
  advisories: AdvisoryModel[];
  state: ApplicationState;
  rand: () => number;
}

export function buildDataset(): Dataset {
  const rand = prng(BENCH_SPEC.seed);
  const packages = buildPackages(rand, BENCH_SPEC.packages);
  const advisories = buildAdvisories(rand, packages);
  const state = new ApplicationState(packages, rand);
  return { packages, advisories, state, rand };
}

function affectedCount(advisory: AdvisoryModel, data: Dataset): number {
  let n = 0;
  for (const p of advisory.packages) {
    const pkg = data.packages[p.index] as PackageModel;
    const version = (pkg.versions[data.state.used[p.index] as number] as PublishedVersionInput).version;
    if (isAffected("npm", version, p.ranges)) n++;
  }
  return n;
}

// ---------------------------------------------------------------------------------------------------
// Writing a store
// ---------------------------------------------------------------------------------------------------

const log = (message: string) => process.stderr.write(`[generate] ${message}\n`);

export interface GenerationReport {
  kind: "sqlite" | "postgres";
  generatorKey: string;
  seconds: Record<string, number>;
  /** Per phase: seconds spent in the statements that maintain the occurrence read model. */
  modelSeconds: Record<string, number>;
  totalSeconds: number;
  storage: StorageReport;
  facts: BenchFacts;
  ingests: { seq: number; packages: unknown; objects: unknown; references: unknown }[];
}

/** Bytes on disk (tables with their indexes) and rows of the history and of the read model. */
export interface StorageReport {
  tables: Record<string, { bytes: number; rows: number }>;
}

const MEASURED_TABLES = [
  "application_packages",
  "external_objects",
  "object_references",
  "cve_occurrences",
  "occurrence_objects",
] as const;

async function measureStorage(handle: StoreHandle): Promise<StorageReport> {
  const tables: StorageReport["tables"] = {};
  // occurrence_object_lists exists on PostgreSQL only (migration 015).
  const measured =
    handle.kind === "postgres" ? [...MEASURED_TABLES, "occurrence_object_lists"] : MEASURED_TABLES;
  for (const table of measured) {
    const rows = Number(
      (await sql<{ n: number }>`select count(*) as n from ${sql.table(table)}`.execute(handle.db)).rows[0]?.n,
    );
    let bytes: number;
    if (handle.kind === "sqlite") {
      // dbstat: every b-tree of the table (its own and its indexes').
      const { rows: pages } = await sql<{ bytes: number }>`select sum(pgsize) as bytes from dbstat
        where name = ${table} or name in (select name from sqlite_schema where type = 'index' and tbl_name = ${table})`.execute(
        handle.db,
      );
      bytes = Number(pages[0]?.bytes ?? 0);
    } else {
      const { rows: size } = await sql<{
        bytes: number;
      }>`select pg_total_relation_size(${table}::regclass) as bytes`.execute(handle.db);
      bytes = Number(size[0]?.bytes ?? 0);
    }
    tables[table] = { bytes, rows };
  }
  return { tables };
}

/** Sums the time of the statements on the read model's tables (Kysely's query log). */
export const modelClock = { ms: 0 };
export function logModelStatements(event: LogEvent): void {
  if (/\b(cve_occurrences|occurrence_objects|occurrence_object_lists)\b/.test(event.query.sql))
    modelClock.ms += event.queryDurationMillis;
}

async function writeStore(handle: StoreHandle): Promise<GenerationReport> {
  const seconds: Record<string, number> = {};
  const modelSeconds: Record<string, number> = {};
  const started = performance.now();
  let mark = started;
  const lap = (name: string) => {
    const now = performance.now();
    seconds[name] = Math.round((now - mark) / 100) / 10;
    modelSeconds[name] = Math.round(modelClock.ms / 100) / 10;
    modelClock.ms = 0;
    mark = now;
    log(`${handle.kind}: ${name} done in ${seconds[name]} s (read model statements ${modelSeconds[name]} s)`);
  };
  modelClock.ms = 0;

  const data = buildDataset();
  lap("model");

  // Advisories first: their packages have no versions yet, so loadAdvisory's recomputation is cheap;
  // loadPublishedVersions then derives each package's facts once, with every range already known.
  const advisoryBatch = 50;
  for (let a = 0; a < data.advisories.length; a += advisoryBatch) {
    await handle.db.transaction().execute(async (trx) => {
      for (const advisory of data.advisories.slice(a, a + advisoryBatch))
        await loadAdvisory(trx, advisory.input);
    });
  }
  lap("advisories");

  const packageBatch = 500;
  for (let i = 0; i < data.packages.length; i += packageBatch) {
    await handle.db.transaction().execute(async (trx) => {
      for (const p of data.packages.slice(i, i + packageBatch))
        await loadPublishedVersions(trx, "npm", p.name, p.versions);
    });
    if ((i / packageBatch) % 10 === 9) log(`${handle.kind}: versions of ${i + packageBatch} packages`);
  }
  lap("publishedVersions");

  const wide = data.advisories[0] as AdvisoryModel;
  const wideCounts: Record<number, number> = {};
  const perAnalysis: BenchFacts["counts"]["perAnalysis"] = [];
  const ingests: GenerationReport["ingests"] = [];
  const narrowCandidates = data.advisories.filter((a) => !a.wide);
  const narrowCountsAll: number[][] = [];
  for (let seq = 1; seq <= BENCH_SPEC.analyses; seq++) {
    if (seq > 1) data.state.evolve(data.rand);
    const input = data.state.toInput(BENCH_SPEC.analysisDates[seq - 1] as string);
    wideCounts[seq] = affectedCount(wide, data);
    narrowCountsAll.push(narrowCandidates.map((a) => affectedCount(a, data)));
    perAnalysis.push({
      seq,
      packages: input.packages.length,
      objects: input.objects.length,
      references: input.references.length,
    });
    const result = await ingestAnalysis(handle.db, BENCH_SPEC.application, input, {
      description: "Synthetic application of the occurrences benchmark",
    });
    ingests.push({ seq, packages: result.packages, objects: result.objects, references: result.references });
    lap(`analysis${seq}`);
  }

  // The narrow CVE: the non-wide advisory affecting the most packages in the latest analysis.
  const latest = narrowCountsAll.at(-1) as number[];
  let best = 0;
  for (let n = 1; n < latest.length; n++) if ((latest[n] as number) > (latest[best] as number)) best = n;
  const narrow = narrowCandidates[best] as AdvisoryModel;
  const narrowCounts: Record<number, number> = {};
  narrowCountsAll.forEach((counts, s) => {
    narrowCounts[s + 1] = counts[best] as number;
  });

  if (handle.kind === "postgres") {
    // Autovacuum would get there on its own in a running system; do it now so plans and timings are stable.
    await sql`vacuum analyze`.execute(handle.db);
  } else {
    await sql`pragma wal_checkpoint(truncate)`.execute(handle.db);
  }
  lap("finish");
  const storage = await measureStorage(handle);

  const facts: BenchFacts = {
    application: BENCH_SPEC.application,
    generatorKey: GENERATOR_KEY,
    analyses: BENCH_SPEC.analysisDates.map((analyzedAt, i) => ({ seq: i + 1, analyzedAt })),
    dateBetween2And3: BENCH_SPEC.dateBetween2And3,
    wideCve: wide.input.id,
    wideAlias: wide.input.aliases[0] as string,
    wideCounts,
    narrowCve: narrow.input.id,
    narrowCounts,
    counts: {
      packages: data.packages.length,
      publishedVersions: data.packages.reduce((n, p) => n + p.versions.length, 0),
      advisories: data.advisories.length,
      applicationObjects: BENCH_SPEC.applicationObjects,
      perAnalysis,
    },
  };
  return {
    kind: handle.kind,
    generatorKey: GENERATOR_KEY,
    seconds,
    modelSeconds,
    totalSeconds: Math.round((performance.now() - started) / 100) / 10,
    facts,
    ingests,
    storage,
  };
}

// ---------------------------------------------------------------------------------------------------
// Caches
// ---------------------------------------------------------------------------------------------------

export interface StoreInfo {
  kind: "sqlite" | "postgres";
  /** SQLite: the data directory (its imaging.db is the store). */
  dataDir?: string;
  sqliteFile?: string;
  databaseUrl?: string;
  reused: boolean;
  report: GenerationReport;
}

export async function ensureSqliteStore(force = false): Promise<StoreInfo> {
  const metaFile = join(SQLITE_DIR, "meta.json");
  const sqliteFile = join(SQLITE_DIR, "imaging.db");
  if (!force && existsSync(metaFile) && existsSync(sqliteFile)) {
    const report = JSON.parse(readFileSync(metaFile, "utf8")) as GenerationReport;
    if (report.generatorKey === GENERATOR_KEY) {
      return { kind: "sqlite", dataDir: SQLITE_DIR, sqliteFile, reused: true, report };
    }
  }
  mkdirSync(BENCH_DATA_DIR, { recursive: true });
  // Stores of other keys at the same scale are of no use: remove them (all under .bench-data only).
  for (const entry of readdirSync(BENCH_DATA_DIR)) {
    const match = /^sqlite-v\d+(?:-[0-9a-f]{8})?(-scale[\d.]+)?(?:\.tmp)?$/.exec(entry);
    if (match && (match[1] ?? "") === SCALE_SUFFIX && entry !== `sqlite-${GENERATOR_KEY}`) {
      rmSync(join(BENCH_DATA_DIR, entry), { recursive: true, force: true });
    }
  }
  const temporary = `${SQLITE_DIR}.tmp`;
  rmSync(temporary, { recursive: true, force: true });
  rmSync(SQLITE_DIR, { recursive: true, force: true });
  mkdirSync(temporary, { recursive: true });
  const handle = await openStore({ sqliteFile: join(temporary, "imaging.db"), log: logModelStatements });
  let report: GenerationReport;
  try {
    report = await writeStore(handle);
  } finally {
    await handle.close();
  }
  writeFileSync(join(temporary, "meta.json"), `${JSON.stringify(report, null, 2)}\n`);
  renameSync(temporary, SQLITE_DIR);
  return { kind: "sqlite", dataDir: SQLITE_DIR, sqliteFile, reused: false, report };
}

async function readPostgresMeta(): Promise<GenerationReport | undefined> {
  const client = new pg.Client({ connectionString: benchPostgresUrl() });
  try {
    await client.connect();
  } catch {
    return undefined; // no such database yet
  }
  try {
    const { rows } = await client.query<{ value: string }>(
      "select value from bench_meta where key = 'report' and exists (select 1 from bench_meta where key = 'generator_key' and value = $1)",
      [GENERATOR_KEY],
    );
    return rows[0] ? (JSON.parse(rows[0].value) as GenerationReport) : undefined;
  } catch {
    return undefined; // no bench_meta: incomplete or foreign database
  } finally {
    await client.end();
  }
}

export async function ensurePostgresStore(force = false): Promise<StoreInfo> {
  const databaseUrl = benchPostgresUrl();
  const existing = force ? undefined : await readPostgresMeta();
  if (existing) return { kind: "postgres", databaseUrl, reused: true, report: existing };

  const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  try {
    await admin.connect();
  } catch (error) {
    throw new Error(
      `PostgreSQL is required by the benchmark (BENCH_POSTGRES_URL=${POSTGRES_ADMIN_URL}): ${(error as Error).message}`,
    );
  }
  await dropDatabase(admin, POSTGRES_DATABASE);
  await admin.query(`create database ${POSTGRES_DATABASE}`);
  await admin.end();

  const handle = await openStore({ databaseUrl, sqliteFile: "", log: logModelStatements });
  let report: GenerationReport;
  try {
    report = await writeStore(handle);
    await sql`create table bench_meta (key text primary key, value text not null)`.execute(handle.db);
    await sql`insert into bench_meta (key, value) values ('report', ${JSON.stringify(report)}), ('generator_key', ${GENERATOR_KEY})`.execute(
      handle.db,
    );
  } finally {
    await handle.close();
  }
  return { kind: "postgres", databaseUrl, reused: false, report };
}

// ---------------------------------------------------------------------------------------------------
// CLI
// ---------------------------------------------------------------------------------------------------

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const kind = process.argv[2];
  const force = process.argv.includes("--force");
  if (kind !== "sqlite" && kind !== "postgres") {
    process.stderr.write("usage: node test/bench/generate-store.ts <sqlite|postgres> [--force]\n");
    process.exit(2);
  }
  const info = kind === "sqlite" ? await ensureSqliteStore(force) : await ensurePostgresStore(force);
  process.stdout.write(`BENCH_STORE ${JSON.stringify(info)}\n`);
}
