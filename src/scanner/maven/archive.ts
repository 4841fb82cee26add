/**
 * What a jar, war or ear holds, by Maven coordinates: the `META-INF/maven/<g>/<a>/pom.properties` (or
 * pom.xml) that Maven-built jars embed, the jars nested in `WEB-INF/lib`, `BOOT-INF/lib` and ear modules,
 * and for a nested jar without Maven metadata its SHA-1 checked against the `.sha1` the repository
 * publishes for candidate coordinates (file name for artifactId and version; manifest and class packages
 * for the groupId). Maven Central's search-by-checksum service is not used: mirrors and offline use
 * have none, while every Maven repository serves `.sha1` files.
 */
import { createHash } from "node:crypto";
import { unzipSync } from "fflate";
import type { Gav } from "./coordinates.ts";
import { parsePom } from "./pom-xml.ts";
import type { MavenRepository } from "./repository.ts";

interface ArchivePackage extends Gav {
  /** Where it was found, `app.war!/WEB-INF/lib/x.jar` style, relative to the scanned archive's label. */
  location: string;
  /** How it was identified. */
  evidence: "pom.properties" | "pom.xml" | "sha1";
  /** Declared by the embedding application's POM (when the application embeds its pom.xml). */
  direct: boolean;
}

interface ArchiveContents {
  packages: ArchivePackage[];
  /** Nested archives that could not be identified, and unreadable nested archives. */
  warnings: string[];
}

/** Not a zip archive (or a damaged one). */
export class ArchiveFormatError extends Error {
  override name = "ArchiveFormatError";
}

const MAX_NESTING = 4;
const NESTED_LIB =
  /^(?:WEB-INF\/lib|BOOT-INF\/lib|lib|APP-INF\/lib)\/[^/]+\.(?:jar|war|rar)$|^[^/]+\.(?:jar|war|rar)$/;
const EMBEDDED_META = /^META-INF\/maven\/[^/]+\/[^/]+\/(pom\.properties|pom\.xml)$/;

interface Entries {
  names: string[];
  files: Record<string, Uint8Array>;
}

function unzip(bytes: Uint8Array, wanted: (name: string) => boolean): Entries {
  const names: string[] = [];
  try {
    const files = unzipSync(bytes, {
      filter: (file) => {
        names.push(file.name);
        return wanted(file.name);
      },
    });
    return { names, files };
  } catch (error) {
    throw new ArchiveFormatError(`not a readable zip archive (${(error as Error).message})`);
  }
}

function properties(text: string): Map<string, string> {
  const map = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    const trimmed = line.trim();
    if (trimmed === "" || trimmed.startsWith("#") || trimmed.startsWith("!")) continue;
    const match = /^([^=:\s]+)\s*[=:]\s*(.*)$/.exec(trimmed);
    if (match) map.set(match[1] as string, (match[2] as string).trim());
  }
  return map;
}

/** Manifest main attributes, continuation lines joined. */
function manifest(text: string): Map<string, string> {
  const map = new Map<string, string>();
  const lines = text.replace(/\r?\n /g, "").split(/\r?\n/);
  for (const line of lines) {
    if (line === "") break;
    const i = line.indexOf(": ");
    if (i > 0) map.set(line.slice(0, i), line.slice(i + 2).trim());
  }
  return map;
}

const decoder = new TextDecoder();

/** The Maven identities a jar's embedded metadata gives (several for a shaded jar). */
function embeddedIdentities(
  files: Record<string, Uint8Array>,
): { gav: Gav; evidence: "pom.properties" | "pom.xml"; pomXml?: string }[] {
  const found = new Map<string, { gav: Gav; evidence: "pom.properties" | "pom.xml"; pomXml?: string }>();
  const dirs = new Set<string>();
  for (const name of Object.keys(files)) if (EMBEDDED_META.test(name)) dirs.add(name.replace(/[^/]+$/, ""));
  for (const dir of [...dirs].sort()) {
    const props = files[`${dir}pom.properties`];
    const xml = files[`${dir}pom.xml`];
    const xmlText = xml ? decoder.decode(xml) : undefined;
    let gav: Gav | undefined;
    let evidence: "pom.properties" | "pom.xml" = "pom.properties";
    if (props) {
      const p = properties(decoder.decode(props));
      const groupId = p.get("groupId");
      const artifactId = p.get("artifactId");
      const version = p.get("version");
      if (groupId && artifactId && version) gav = { groupId, artifactId, version };
    }
    if (!gav && xmlText) {
      try {
        const raw = parsePom(xmlText);
        const groupId = raw.groupId ?? raw.parent?.groupId;
        const version = raw.version ?? raw.parent?.version;
        if (groupId && raw.artifactId && version && !`${groupId}${version}`.includes("${")) {
          gav = { groupId, artifactId: raw.artifactId, version };
          evidence = "pom.xml";
        }
      } catch {
        // an unreadable embedded POM identifies nothing; the SHA-1 lookup may still
      }
    }
    if (gav) found.set(`${gav.groupId}:${gav.artifactId}`, { gav, evidence, pomXml: xmlText });
  }
  return [...found.values()];
}

/** `commons-lang-2.6.jar` → artifactId `commons-lang`, version `2.6`. */
function splitFileName(fileName: string): { artifactId: string; version: string } | undefined {
  const base = fileName.replace(/^.*\//, "").replace(/\.(?:jar|war|ear|rar)$/, "");
  const match = /^(.+?)-(\d[^-]*(?:-.+)?)$/.exec(base);
  return match ? { artifactId: match[1] as string, version: match[2] as string } : undefined;
}

/** groupIds worth trying for a jar, most likely first (bounded: each costs one request at most). */
function candidateGroupIds(entries: Entries, artifactId: string, known: readonly string[]): string[] {
  const candidates: string[] = [];
  const add = (g: string | undefined) => {
    if (g && /^[A-Za-z0-9_.-]+$/.test(g) && !candidates.includes(g)) candidates.push(g);
  };
  for (const g of known) add(g);
  const mf = entries.files["META-INF/MANIFEST.MF"];
  const attributes = mf ? manifest(decoder.decode(mf)) : new Map<string, string>();
  add(attributes.get("Implementation-Vendor-Id"));
  for (const name of [attributes.get("Bundle-SymbolicName"), attributes.get("Automatic-Module-Name")]) {
    const symbolic = name?.split(";")[0]?.trim();
    if (!symbolic) continue;
    const parts = symbolic.split(".");
    for (let n = parts.length; n >= 2; n--) add(parts.slice(0, n).join("."));
  }
  // old-style groupIds: the artifactId itself (hsqldb:hsqldb), or its first word (xerces:xercesImpl)
  add(artifactId);
  add(/^[a-z0-9]+/.exec(artifactId)?.[0]);
  // the packages holding most classes
  const counts = new Map<string, number>();
  for (const name of entries.names) {
    if (!name.endsWith(".class") || name.startsWith("META-INF/")) continue;
    const parts = name.split("/").slice(0, -1);
    for (let n = Math.min(parts.length, 4); n >= 2; n--) {
      const prefix = parts.slice(0, n).join(".");
      counts.set(prefix, (counts.get(prefix) ?? 0) + 1);
    }
  }
  const ranked = [...counts.entries()].sort((a, b) => b[1] - a[1] || b[0].length - a[0].length);
  for (const [prefix] of ranked.slice(0, 6)) add(prefix);
  return candidates.slice(0, 12);
}

async function identifyBySha1(
  bytes: Uint8Array,
  entries: Entries,
  fileName: string,
  options: ReadArchiveOptions,
  known: ReadonlyMap<string, string[]>,
): Promise<Gav | undefined> {
  const parts = splitFileName(fileName);
  if (!parts) return undefined;
  const digest = createHash("sha1").update(bytes).digest("hex");
  const knownGroups = known.get(`${parts.artifactId}:${parts.version}`) ?? [];
  for (const groupId of candidateGroupIds(entries, parts.artifactId, knownGroups)) {
    const gav = { groupId, artifactId: parts.artifactId, version: parts.version };
    if ((await options.repository.sha1(gav, fileName.endsWith(".war") ? "war" : "jar")) === digest)
      return gav;
  }
  return undefined;
}

interface ReadArchiveOptions {
  repository: MavenRepository;
  /**
   * The artifacts an application's embedded pom.xml resolves to (its dependency tree): tells the groupId
   * of a nested jar that carries no Maven metadata, before any guess.
   */
  resolveEmbeddedPom?(pomXml: string, label: string): Promise<Gav[]>;
}

interface Scope {
  depth: number;
  /** groupId:artifactId the embedding application's POM declares. */
  declared: ReadonlySet<string>;
  /** artifactId:version → groupIds, from the embedding application's resolved POM. */
  known: ReadonlyMap<string, string[]>;
}

/**
 * Reads an archive. A war, an ear or a Spring Boot jar is the application itself: its own identity is not a
 * package, the libraries nested in it are. A plain jar is a library: its embedded identities are packages.
 */
export async function readArchive(
  bytes: Uint8Array,
  label: string,
  options: ReadArchiveOptions,
  scope: Scope = { depth: 0, declared: new Set(), known: new Map() },
): Promise<ArchiveContents> {
  const entries = unzip(
    bytes,
    (name) =>
      EMBEDDED_META.test(name) ||
      name === "META-INF/MANIFEST.MF" ||
      (scope.depth < MAX_NESTING && NESTED_LIB.test(name) && !name.endsWith("/")),
  );
  const nested = Object.keys(entries.files).filter((name) => NESTED_LIB.test(name));
  const isContainer =
    /\.(?:war|ear)$/i.test(label) ||
    entries.names.some(
      (n) => n.startsWith("WEB-INF/") || n.startsWith("BOOT-INF/") || n === "META-INF/application.xml",
    );
  const result: ArchiveContents = { packages: [], warnings: [] };
  const identities = embeddedIdentities(entries.files);
  const isDeclared = (gav: Gav) => scope.declared.has(`${gav.groupId}:${gav.artifactId}`);

  if (!isContainer) {
    for (const identity of identities) {
      result.packages.push({
        ...identity.gav,
        location: label,
        evidence: identity.evidence,
        direct: isDeclared(identity.gav),
      });
    }
    if (identities.length === 0) {
      const gav = await identifyBySha1(bytes, entries, label, options, scope.known);
      if (gav) result.packages.push({ ...gav, location: label, evidence: "sha1", direct: isDeclared(gav) });
      else
        result.warnings.push(
          `${label}: not identified (no Maven metadata inside, and its SHA-1 matches no candidate coordinates in the repository)`,
        );
    }
    return result;
  }

  // the application's own POM tells which nested libraries it declares, and what its tree resolves to
  const declared = new Set<string>();
  const known = new Map<string, string[]>();
  for (const identity of identities) {
    if (!identity.pomXml) continue;
    try {
      for (const d of parsePom(identity.pomXml).dependencies) declared.add(`${d.groupId}:${d.artifactId}`);
    } catch {
      continue;
    }
    const needsLookup = nested.some((name) => !hasMavenMetadata(entries, name));
    if (options.resolveEmbeddedPom && needsLookup) {
      try {
        for (const gav of await options.resolveEmbeddedPom(identity.pomXml, label)) {
          const key = `${gav.artifactId}:${gav.version}`;
          known.set(key, [...(known.get(key) ?? []), gav.groupId]);
        }
      } catch (error) {
        // the guesses below still apply
        result.warnings.push(
          `${label}: its embedded pom.xml could not be resolved (${(error as Error).message})`,
        );
      }
    }
  }
  const inner = await Promise.all(
    nested.sort().map(async (name) => {
      const innerLabel = `${label}!/${name}`;
      try {
        return await readArchive(entries.files[name] as Uint8Array, innerLabel, options, {
          depth: scope.depth + 1,
          declared,
          known,
        });
      } catch (error) {
        return { packages: [], warnings: [`${innerLabel}: ${(error as Error).message}`] };
      }
    }),
  );
  for (const contents of inner) {
    result.packages.push(...contents.packages);
    result.warnings.push(...contents.warnings);
  }
  return result;
}

/** Whether a nested jar carries META-INF/maven metadata (read cheaply: its file names only). */
function hasMavenMetadata(entries: Entries, name: string): boolean {
  try {
    let found = false;
    unzipSync(entries.files[name] as Uint8Array, {
      filter: (file) => {
        if (EMBEDDED_META.test(file.name)) found = true;
        return false;
      },
    });
    return found;
  } catch {
    return false;
  }
}
