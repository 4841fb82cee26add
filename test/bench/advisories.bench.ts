/**
 * Benchmark of `imaging advisories import` (npm run bench:advisories): a 50,000-record OSV archive
 * (the size of OSV's npm all.zip order of magnitude), imported into an empty store and then again
 * (every record unchanged), on SQLite and on PostgreSQL. Target: ≤ 60 s for the first import.
 *
 * The archive is generated (the registries ship no OSV export): records shaped like GitHub's —
 * GHSA id + CVE alias, CVSS v3.1 vector, database_specific.severity, 1–3 affected npm or Maven packages
 * with introduced/fixed or last_affected ranges, and for a third of them the `versions` list OSV's
 * exports add — over 15,000 npm and 5,000 Maven package names, so many records share packages.
 *
 * Environment: BENCH_RECORDS (default 50000), BENCH_POSTGRES_URL (default the local server),
 * BENCH_STORES (default "sqlite,postgres"), BENCH_WRITE_DOCS=1 to rewrite docs/benchmarks.md at another
 * size (it is rewritten at the default size).
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { zipSync } from "fflate";
import pg from "pg";
import { type ImportResult, importAdvisories } from "../../src/scanner/advisories/import.ts";
import { openStore } from "../../src/store/database.ts";
import { dropDatabase } from "../support/stores.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const DOCS_FILE = join(ROOT, "docs", "benchmarks.md");
const TARGET_SECONDS = 60;
const log = (message: string) => process.stderr.write(`[bench] ${message}\n`);

const SEVERITIES: [string, string][] = [
  ["CRITICAL", "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H"],
  ["HIGH", "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:N/A:H"],
  ["MODERATE", "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:N/A:L"],
  ["LOW", "CVSS:3.1/AV:L/AC:H/PR:H/UI:R/S:U/C:L/I:N/A:N"],
];
const GHSA_CHARS = "23456789cfghjmpqrvwx";

function ghsaId(i: number): string {
  let n = i;
  let s = "";
  for (let k = 0; k < 12; k++) {
    s += GHSA_CHARS[n % 20];
    n = Math.floor(n / 20);
  }
  return `GHSA-${s.slice(0, 4)}-${s.slice(4, 8)}-${s.slice(8, 12)}`;
}

/** One generated record, deterministic in `i`. */
export function benchRecord(i: number): Record<string, unknown> {
  const [severity, vector] = SEVERITIES[i % SEVERITIES.length] as [string, string];
  const affected = Array.from({ length: 1 + (i % 3) }, (_, k) => {
    const maven = (i + k) % 10 < 3;
    const name = maven
      ? `org.example.g${(i + k) % 300}:artifact-${(i * 7 + k) % 5000}`
      : `pkg-${(i * 13 + k) % 15000}`;
    const major = 1 + ((i + k) % 5);
    const lastAffected = (i + k) % 7 === 0;
    const events = [
      { introduced: k === 0 ? "0" : `${major}.0.0` },
      lastAffected ? { last_affected: `${major}.4.2` } : { fixed: `${major}.${(i % 9) + 1}.${i % 4}` },
    ];
    const versions =
      i % 3 === 0 ? Array.from({ length: 10 + (i % 20) }, (_, v) => `${major}.0.${v}`) : undefined;
    return {
      package: { ecosystem: maven ? "Maven" : "npm", name },
      ranges: [{ type: "ECOSYSTEM", events }],
      ...(versions ? { versions } : {}),
    };
  });
  return {
    schema_version: "1.4.0",
    id: ghsaId(i),
    modified: "2025-01-01T00:00:00Z",
    published: "2024-06-01T00:00:00Z",
    aliases: [`CVE-2099-${String(10000 + i)}`],
    summary: `Generated advisory ${i}`,
    details: "Generated for the import benchmark.",
    severity: [{ type: "CVSS_V3", score: vector }],
    affected,
    database_specific: { severity, github_reviewed: true, cwe_ids: ["CWE-400"] },
  };
}

export function writeBenchArchive(file: string, records: number): number {
  const files: Record<string, Uint8Array> = {};
  for (let i = 0; i < records; i++) {
    files[`${ghsaId(i)}.json`] = Buffer.from(JSON.stringify(benchRecord(i), null, 2));
  }
  const zip = zipSync(files, { level: 6 });
  writeFileSync(file, zip);
  return zip.length;
}

export interface StoreRun {
  store: "sqlite" | "postgres";
  firstSeconds: number;
  /** CPU time of this process during the first import (the machine is shared: wall time varies). */
  firstCpuSeconds: number;
  first: ImportResult;
  againSeconds: number;
  again: ImportResult;
  vulnerabilities: number;
  ranges: number;
  packages: number;
}

export async function runStore(
  kind: "sqlite" | "postgres",
  archive: string,
  postgresAdminUrl: string,
): Promise<StoreRun> {
  const dir = mkdtempSync(join(os.tmpdir(), "imaging-bench-advisories-"));
  let databaseUrl: string | undefined;
  const dbName = `imaging_bench_adv_${randomBytes(4).toString("hex")}`;
  if (kind === "postgres") {
    const admin = new pg.Client({ connectionString: postgresAdminUrl });
    await admin.connect();
    await admin.query(`create database ${dbName}`);
    await admin.end();
    const url = new URL(postgresAdminUrl);
    url.pathname = `/${dbName}`;
    databaseUrl = url.toString();
  }
  const handle = await openStore({ databaseUrl, sqliteFile: join(dir, "imaging.db") });
  try {
    let started = performance.now();
    const cpu = process.cpuUsage();
    const first = await importAdvisories(handle.db, [archive], { progress: log });
    const firstSeconds = (performance.now() - started) / 1000;
    const used = process.cpuUsage(cpu);
    const firstCpuSeconds = (used.user + used.system) / 1e6;
    started = performance.now();
    const again = await importAdvisories(handle.db, [archive]);
    const againSeconds = (performance.now() - started) / 1000;
    const count = async (table: "vulnerabilities" | "vulnerability_ranges" | "packages") =>
      Number(
        (
          await handle.db
            .selectFrom(table)
            .select((eb) => eb.fn.countAll<number>().as("n"))
            .executeTakeFirstOrThrow()
        ).n,
      );
    return {
      store: kind,
      firstSeconds,
      firstCpuSeconds,
      first,
      againSeconds,
      again,
      vulnerabilities: await count("vulnerabilities"),
      ranges: await count("vulnerability_ranges"),
      packages: await count("packages"),
    };
  } finally {
    await handle.close();
    rmSync(dir, { recursive: true, force: true });
    if (kind === "postgres") {
      const admin = new pg.Client({ connectionString: postgresAdminUrl });
      await admin.connect();
      try {
        await dropDatabase(admin, dbName);
      } finally {
        await admin.end();
      }
    }
  }
}

function report(records: number, zipBytes: number, runs: StoreRun[], load: number[]): string {
  const cpu = os.cpus()[0]?.model ?? "unknown CPU";
  const rows = runs.map(
    (r) =>
      `| ${r.store} | ${r.firstSeconds.toFixed(1)} s | ${r.firstCpuSeconds.toFixed(1)} s | ${Math.round(records / r.firstSeconds).toLocaleString("en")} | ` +
      `${r.againSeconds.toFixed(1)} s | ${r.vulnerabilities.toLocaleString("en")} | ${r.ranges.toLocaleString("en")} | ` +
      `${r.packages.toLocaleString("en")} | ${r.firstSeconds <= TARGET_SECONDS ? "met" : "**missed**"} |`,
  );
  return [
    "## Advisory import",
    "",
    "`imaging advisories import` of a generated OSV archive (`npm run bench:advisories`, test/bench/advisories.bench.ts):",
    `${records.toLocaleString("en")} GitHub-shaped records (1–3 npm or Maven packages each, a third with OSV's \`versions\``,
    `list), ${(zipBytes / 1024 / 1024).toFixed(1)} MB zipped, into an empty store, then the same archive again (every`,
    "record unchanged). Target: first import ≤ 60 s.",
    "",
    `Machine: ${os.cpus().length} × ${cpu}, ${Math.round(os.totalmem() / 1024 ** 3)} GiB, Node.js ${process.version}, ${new Date().toISOString().slice(0, 10)}.`,
    `Shared with other work while it ran: load average ${load.map((l) => l.toFixed(1)).join(" / ")} (1/5/15 min) at the`,
    "end, on 2 cores, so wall times are pessimistic; the CPU time of the importing process is steadier.",
    "",
    "| store | first import | its CPU time | records/s | re-import | advisories | ranges | packages | target |",
    "|---|---|---|---|---|---|---|---|---|",
    ...rows,
    "",
    "The import runs in transactions of 500 records; each recomputes the facts of the packages its",
    "records touched. Listed versions already inside a range are not stored (same union, far fewer rows).",
    "",
  ].join("\n");
}

function writeDocs(section: string): void {
  const text = readFileSync(DOCS_FILE, "utf8");
  const start = text.indexOf("## Advisory import");
  let next = start >= 0 ? text.indexOf("\n## ", start + 3) : -1;
  if (next < 0) next = text.length;
  const updated =
    start >= 0
      ? `${text.slice(0, start)}${section}${text.slice(next + 1)}`
      : `${text.trimEnd()}\n\n${section}`;
  writeFileSync(DOCS_FILE, updated);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const records = Number(process.env.BENCH_RECORDS ?? "50000");
  const stores = (process.env.BENCH_STORES ?? "sqlite,postgres").split(",") as ("sqlite" | "postgres")[];
  const postgres = process.env.BENCH_POSTGRES_URL ?? "postgres://imaging:imaging@127.0.0.1:5432/postgres";
  const dir = mkdtempSync(join(os.tmpdir(), "imaging-bench-osv-"));
  try {
    const archive = join(dir, "all.zip");
    let started = performance.now();
    const zipBytes = writeBenchArchive(archive, records);
    log(
      `archive: ${records} records, ${zipBytes} bytes, ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    const runs: StoreRun[] = [];
    for (const store of stores) {
      started = performance.now();
      const run = await runStore(store, archive, postgres);
      log(
        `${store}: first ${run.firstSeconds.toFixed(1)} s (${JSON.stringify({ ...run.first, malformed: run.first.malformed.length })}), ` +
          `again ${run.againSeconds.toFixed(1)} s (unchanged ${run.again.unchanged})`,
      );
      if (run.first.imported !== records || run.again.unchanged !== records) {
        throw new Error(`${store}: expected ${records} imported then unchanged`);
      }
      runs.push(run);
    }
    const section = report(records, zipBytes, runs, os.loadavg());
    process.stdout.write(`${section}\n`);
    if (records === 50000 || process.env.BENCH_WRITE_DOCS === "1") writeDocs(section);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
