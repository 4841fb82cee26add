/**
 * Fetches the published versions (and their release times) of the packages used by the demo dataset
 * and writes them to src/scanner/demo/package-versions.json.
 *
 *   node scripts/fetch-demo-facts.ts
 *
 * Output: { "<ecosystem>:<name>": [{ "version": "2.14.1", "releasedAt": "2021-03-07T05:12:27Z" }, ...] }
 * (Maven names are "groupId:artifactId"). A list is in ascending publish order when every release time is
 * known, in ascending version order (the platform's ordering) otherwise.
 *
 * Each package's FULL published history is recorded, pre-releases included (the platform itself never
 * recommends a pre-release), so that the newest release and the release cadence computed from it are real.
 * The few exclusions are listed per package (`exclude`) or below (`NPM_SNAPSHOT`) and in SOURCES.md.
 *
 * Where the versions and release times come from (see src/scanner/demo/SOURCES.md):
 * - Maven Central: maven-metadata.xml lists the versions. The release time is the `Last-Modified` header of
 *   the version's POM when the repository sends one; otherwise the creation time of the POM's OpenPGP
 *   signature (`.pom.asc`), i.e. the moment the release was signed for upload to Central (the time is inside
 *   the signed data, so it does not depend on the mirror). A release whose signature the repository does not
 *   serve (old uploads made before Central required them, a few recent ones on some mirrors) keeps
 *   `releasedAt: null`.
 * - npm: `npm view <name> versions --json` lists the versions. The publish times of the public registry are
 *   used only when the registry serves its publish record (`time.created` present); a mirror that does not
 *   (its `time` values are its own copy times) is ignored. Release dates are then taken from
 *   src/scanner/demo/npm-release-dates.json, collected by hand from public sources that list per-version
 *   publish dates (captures of the registry's publish record, release lists, changelogs: its `source` and
 *   `note` fields). A date-only value ("2021-02-20") becomes "2021-02-20T00:00:00Z"
 *   (day precision). Versions no source dates keep `releasedAt: null`.
 *
 * Requests: one metadata file per Maven package and one small request per Maven version, at most 4 at a time
 * (about 3,300 from an empty cache: the five Spring Framework modules alone have some 330 versions each).
 * Every response is cached in a directory outside the repository (DEMO_FACTS_CACHE, default
 * $TMPDIR/fetch-demo-facts-cache), so a rerun makes no request it has made before.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { compareVersions, type Ecosystem } from "../src/scanner/versions/index.ts";

interface PackageSpec {
  ecosystem: Ecosystem;
  /** npm name, or Maven "groupId:artifactId" */
  name: string;
  /** versions left out, with the reason in `why` */
  exclude?: RegExp;
  why?: string;
}

// The packages of the demo applications and advisories.
const PACKAGES: PackageSpec[] = [
  // payments-service, claims-portal (Maven)
  { ecosystem: "maven", name: "org.apache.logging.log4j:log4j-core" },
  { ecosystem: "maven", name: "org.apache.logging.log4j:log4j-api" },
  { ecosystem: "maven", name: "org.springframework:spring-core" },
  { ecosystem: "maven", name: "org.springframework:spring-beans" },
  { ecosystem: "maven", name: "org.springframework:spring-context" },
  { ecosystem: "maven", name: "org.springframework:spring-web" },
  { ecosystem: "maven", name: "org.springframework:spring-webmvc" },
  { ecosystem: "maven", name: "com.fasterxml.jackson.core:jackson-databind" },
  { ecosystem: "maven", name: "com.fasterxml.jackson.core:jackson-core" },
  { ecosystem: "maven", name: "com.fasterxml.jackson.core:jackson-annotations" },
  { ecosystem: "maven", name: "org.apache.commons:commons-lang3" },
  { ecosystem: "maven", name: "org.apache.commons:commons-text" },
  {
    ecosystem: "maven",
    name: "commons-io:commons-io",
    exclude: /^20030203\.000550$/,
    why: "a 2003 pre-1.0 build published under a date-stamp version that sorts above every real release",
  },
  {
    ecosystem: "maven",
    name: "com.google.guava:guava",
    exclude: /-android$/,
    why: "the Android flavour of releases also published as the JRE flavour (the demo uses -jre)",
  },
  { ecosystem: "maven", name: "org.slf4j:slf4j-api" },
  { ecosystem: "maven", name: "org.flywaydb:flyway-core" },
  {
    ecosystem: "maven",
    name: "org.postgresql:postgresql",
    exclude: /\.jre[67]$|-jdbc(3|41|42)$/,
    why: "the Java 6/7 (.jre6/.jre7) and JDBC 3/4.1/4.2 flavours of releases also published as the main flavour",
  },
  { ecosystem: "maven", name: "com.zaxxer:HikariCP" },
  // storefront-web (npm)
  { ecosystem: "npm", name: "lodash" },
  { ecosystem: "npm", name: "react" },
  { ecosystem: "npm", name: "react-dom" },
  { ecosystem: "npm", name: "scheduler" },
  { ecosystem: "npm", name: "react-router" },
  { ecosystem: "npm", name: "react-router-dom" },
  { ecosystem: "npm", name: "@remix-run/router" },
  { ecosystem: "npm", name: "uuid" },
  { ecosystem: "npm", name: "ms" },
  { ecosystem: "npm", name: "classnames" },
  { ecosystem: "npm", name: "clsx" },
  { ecosystem: "npm", name: "date-fns" },
  { ecosystem: "npm", name: "loose-envify" },
  { ecosystem: "npm", name: "js-tokens" },
  { ecosystem: "npm", name: "zod" },
  { ecosystem: "npm", name: "immer" },
];

/**
 * npm automated build channels, the npm counterpart of Maven SNAPSHOTs (which Central does not list): "0.0.0-"
 * snapshots, canary/experimental/nightly builds and builds tagged with a commit hash and a date
 * (react's "18.3.0-next-<sha>-20230420"). Thousands of them for react, react-dom and scheduler; left out.
 */
const NPM_SNAPSHOT = /^0\.0\.0-|-(canary|experimental|nightly)\b|[-.][0-9a-f]{7,}[-.]\d{8}/;

const MAVEN_REPOSITORY = "https://repo1.maven.org/maven2";
const MAVEN_CONCURRENCY = 4;
const DEMO_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "src", "scanner", "demo");
const OUTPUT = join(DEMO_DIR, "package-versions.json");
const NPM_DATES = join(DEMO_DIR, "npm-release-dates.json");
const CACHE_DIR = process.env.DEMO_FACTS_CACHE ?? join(tmpdir(), "fetch-demo-facts-cache");

interface VersionEntry {
  version: string;
  releasedAt: string | null;
}

/**
 * npm-release-dates.json: { "<name>": { "source": "<url>" | ["<url>", ...], "note": "<which source covers what>",
 * "dates": { "<version>": "YYYY-MM-DD" | "<ISO 8601 UTC>" } } }
 */
type NpmReleaseDates = Record<
  string,
  { source: string | string[]; note?: string; dates: Record<string, string> }
>;

let requestCount = 0;
let cachedCount = 0;

// ---------------------------------------------------------------------------------------------- npm

async function npmVersions(spec: PackageSpec, knownDates: NpmReleaseDates): Promise<VersionEntry[]> {
  const stdout = await cached(`npm view ${spec.name} versions time`, async () => {
    const { stdout } = await promisify(execFile)("npm", ["view", spec.name, "versions", "time", "--json"], {
      maxBuffer: 64 * 1024 * 1024,
    });
    return stdout;
  });
  const data = JSON.parse(stdout as string) as { versions: string[] | string; time?: Record<string, string> };
  const versions = Array.isArray(data.versions) ? data.versions : [data.versions];
  const time = data.time ?? {};
  const trustedTimes = typeof time.created === "string";
  const dates = knownDates[spec.name]?.dates ?? {};
  const kept = versions.filter((v) => !NPM_SNAPSHOT.test(v) && !spec.exclude?.test(v));
  for (const version of Object.keys(dates)) {
    if (!kept.includes(version))
      throw new Error(`npm-release-dates.json: ${spec.name}@${version} is not kept`);
  }
  const entries = kept.map((version) => {
    let releasedAt: string | null = null;
    if (trustedTimes && time[version]) releasedAt = isoUtc(new Date(time[version]));
    else if (dates[version] !== undefined) releasedAt = parseDate(dates[version], `${spec.name}@${version}`);
    return { version, releasedAt };
  });
  return sortEntries("npm", entries);
}

function parseDate(value: string, where: string): string {
  const iso = /^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value;
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) throw new Error(`npm-release-dates.json: ${where}: bad date ${value}`);
  return isoUtc(date);
}

// -------------------------------------------------------------------------------------------- Maven

async function mavenVersions(spec: PackageSpec): Promise<VersionEntry[]> {
  const [groupId, artifactId] = spec.name.split(":") as [string, string];
  const base = `${MAVEN_REPOSITORY}/${groupId.replaceAll(".", "/")}/${artifactId}`;
  const metadata = await httpText(`${base}/maven-metadata.xml`);
  const versions = [...metadata.matchAll(/<version>([^<]+)<\/version>/g)].map((m) => m[1] as string);
  const kept = [...new Set(versions)].filter((v) => !/-SNAPSHOT$/i.test(v) && !spec.exclude?.test(v));

  // Does this repository send Last-Modified? Ask once per package, then use signatures if it does not.
  let useLastModified = false;
  const newest = kept.at(-1);
  if (newest !== undefined) {
    useLastModified = (await lastModified(`${base}/${newest}/${artifactId}-${newest}.pom`)) !== null;
  }

  const entries = await mapPool(kept, MAVEN_CONCURRENCY, async (version) => {
    const pom = `${base}/${version}/${artifactId}-${version}.pom`;
    let date: Date | null;
    if (useLastModified) {
      date = await lastModified(pom);
    } else {
      const signature = await httpText(`${pom}.asc`, true);
      date = signature === null ? null : signatureCreationTime(signature);
    }
    return { version, releasedAt: date === null ? null : isoUtc(date) };
  });
  const undated = entries.filter((e) => e.releasedAt === null).map((e) => e.version);
  if (undated.length > 0) console.warn(`  ! maven:${spec.name}: no release time for ${undated.join(" ")}`);
  return sortEntries("maven", entries);
}

async function lastModified(url: string): Promise<Date | null> {
  const header = await cached(`HEAD ${url}`, async () => {
    requestCount++;
    const response = await fetch(url, { method: "HEAD" });
    if (!response.ok) throw new Error(`HEAD ${url}: HTTP ${response.status}`);
    return response.headers.get("last-modified");
  });
  return header === null ? null : new Date(header);
}

/** The creation time (hashed subpacket 2, or the v3 header field) of an ASCII-armored OpenPGP signature. */
function signatureCreationTime(armored: string): Date | null {
  const lines = armored.split(/\r?\n/);
  let i = lines.findIndex((l) => l.startsWith("-----BEGIN PGP SIGNATURE-----")) + 1;
  if (i === 0) return null;
  while (i < lines.length && (lines[i] as string).trim() !== "") i++; // armor headers
  let base64 = "";
  for (i++; i < lines.length; i++) {
    const line = (lines[i] as string).trim();
    if (line.startsWith("=") || line.startsWith("-----")) break;
    base64 += line;
  }
  const bytes = Buffer.from(base64, "base64");
  let p = 0;
  const ctb = bytes[p++] ?? 0;
  if ((ctb & 0x80) === 0) return null;
  let tag: number;
  if ((ctb & 0x40) !== 0) {
    tag = ctb & 0x3f;
    const l0 = bytes[p++] ?? 0;
    if (l0 >= 192 && l0 < 224) p += 1;
    else if (l0 === 255) p += 4;
  } else {
    tag = (ctb >> 2) & 0x0f;
    p += [1, 2, 4, 0][ctb & 3] as number;
  }
  if (tag !== 2) return null;
  const version = bytes[p];
  if (version === 3) return new Date(bytes.readUInt32BE(p + 3) * 1000);
  if (version !== 4) return null;
  const end = p + 6 + bytes.readUInt16BE(p + 4);
  for (let q = p + 6; q < end; ) {
    const l0 = bytes[q] as number;
    let length: number;
    if (l0 < 192) {
      length = l0;
      q += 1;
    } else if (l0 < 255) {
      length = ((l0 - 192) << 8) + (bytes[q + 1] as number) + 192;
      q += 2;
    } else {
      length = bytes.readUInt32BE(q + 1);
      q += 5;
    }
    if (((bytes[q] as number) & 0x7f) === 2) return new Date(bytes.readUInt32BE(q + 1) * 1000);
    q += length;
  }
  return null;
}

// ------------------------------------------------------------------------------------------ helpers

/** Memoises `fetch` results (strings or null) on disk, keyed by `key`. */
async function cached(key: string, fetcher: () => Promise<string | null>): Promise<string | null> {
  const file = join(CACHE_DIR, `${createHash("sha256").update(key).digest("hex")}.json`);
  try {
    const hit = JSON.parse(await readFile(file, "utf8")) as { key: string; value: string | null };
    if (hit.key === key) {
      cachedCount++;
      return hit.value;
    }
  } catch {
    // not cached yet
  }
  const value = await fetcher();
  await mkdir(CACHE_DIR, { recursive: true });
  await writeFile(file, JSON.stringify({ key, value }));
  return value;
}

async function httpText(url: string, optional: true): Promise<string | null>;
async function httpText(url: string): Promise<string>;
async function httpText(url: string, optional = false): Promise<string | null> {
  return cached(`GET ${url}`, async () => {
    requestCount++;
    const response = await fetch(url);
    if (optional && response.status === 404) return null;
    if (!response.ok) throw new Error(`GET ${url}: HTTP ${response.status}`);
    return response.text();
  });
}

async function mapPool<T, R>(items: T[], size: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(size, items.length) }, worker));
  return results;
}

function isoUtc(date: Date): string {
  return date.toISOString().replace(".000Z", "Z");
}

/** Ascending publish order when every time is known, version order otherwise. */
function sortEntries(ecosystem: Ecosystem, entries: VersionEntry[]): VersionEntry[] {
  const allDated = entries.every((e) => e.releasedAt !== null);
  const sorted = [...entries].sort((a, b) => {
    if (allDated && a.releasedAt !== b.releasedAt)
      return (a.releasedAt as string) < (b.releasedAt as string) ? -1 : 1;
    return compareVersions(ecosystem, a.version, b.version);
  });
  if (!allDated) {
    for (let i = 1; i < sorted.length; i++) {
      const [a, b] = [sorted[i - 1] as VersionEntry, sorted[i] as VersionEntry];
      if (compareVersions(ecosystem, a.version, b.version) === 0)
        console.warn(`  ! ${ecosystem}: ${a.version} and ${b.version} are equal versions`);
    }
  }
  return sorted;
}

// --------------------------------------------------------------------------------------------- main

const npmDates = JSON.parse(await readFile(NPM_DATES, "utf8")) as NpmReleaseDates;
for (const name of Object.keys(npmDates)) {
  if (!PACKAGES.some((p) => p.ecosystem === "npm" && p.name === name))
    throw new Error(`npm-release-dates.json: ${name} is not a demo package`);
}
const result: Record<string, VersionEntry[]> = {};
for (const spec of PACKAGES) {
  const key = `${spec.ecosystem}:${spec.name}`;
  const entries = spec.ecosystem === "npm" ? await npmVersions(spec, npmDates) : await mavenVersions(spec);
  if (entries.length === 0) throw new Error(`${key}: no published version`);
  const dated = entries.filter((e) => e.releasedAt !== null).length;
  console.log(`${key}: ${entries.length} versions, ${dated} with a release time`);
  result[key] = entries;
}
await writeFile(OUTPUT, `${JSON.stringify(result, null, 2)}\n`);
console.log(
  `wrote ${OUTPUT} (${Object.keys(result).length} packages; ${requestCount} requests, ${cachedCount} answered from ${CACHE_DIR})`,
);
