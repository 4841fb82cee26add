/**
 * What a jar, war or ear holds, by Maven coordinates: the `META-INF/maven/<g>/<a>/pom.properties` (or
 * pom.xml) that Maven-built jars embed, the jars nested in `WEB-INF/lib`, `BOOT-INF/lib` and ear modules
 * (read one at a time, under the limits of ../archive/limits.ts), a nested jar without Maven metadata
 * identified by its SHA-1 (jar-identity.ts), and what the archive's own POM declares but does not ship:
 *
 * - a library jar scanned on its own, or a thin war/ear (no nested jars), has no resolved dependency jars:
 *   its embedded POM (or a POM beside it) is resolved as Maven would (compile and runtime scopes) and the
 *   artifacts become packages;
 * - a war or Spring Boot jar whose lib folder lacks a declared dependency gets it the same way (not an
 *   optional one: the packaging leaves those out by choice, as Spring Boot does devtools).
 * A jar the archive ships always wins over the POM's answer for the same groupId:artifactId.
 */
import { createHash } from "node:crypto";
import {
  ArchiveFormatError,
  ArchiveLimitError,
  type ArchiveLimits,
  InflateBudget,
} from "../archive/limits.ts";
import { ZipArchive } from "../archive/zip.ts";
import { type Gav, repositoryUrl } from "./coordinates.ts";
import { type IdentifyContext, identifyJar, type JarFacts, type Sibling } from "./jar-identity.ts";
import { packagedAt, packagedAtKey } from "./packaged-at.ts";
import { parsePom, type RawPom } from "./pom-xml.ts";

export { ArchiveFormatError, ArchiveLimitError };

type Evidence = "pom.properties" | "pom.xml" | "sha1" | "sha1 search" | "resolved POM";

interface ArchivePackage extends Gav {
  /**
   * Where it was found: `app.war!/WEB-INF/lib/x.jar`, relative to the scanned archive's label; for a
   * package resolved from a POM, that POM (`lib.jar!/META-INF/maven/g/a/pom.xml`).
   */
  location: string;
  evidence: Evidence;
  /** Declared by the application's own POM (or the scanned jar itself). */
  direct: boolean;
}

interface ArchiveContents {
  packages: ArchivePackage[];
  /** Nested archives not identified or not readable, limits reached, POMs not resolved. */
  warnings: string[];
}

/** An artifact a POM resolves to (dependency-graph.ts). */
export interface ResolvedArtifact extends Gav {
  type: string;
  scope: string;
  optional: boolean;
  depth: number;
}

interface ReadArchiveOptions {
  identify: Omit<IdentifyContext, "warn">;
  /** Resolves a POM (embedded in an archive, or a file beside it) as Maven would. */
  resolvePom(
    pom: { raw: RawPom; path?: string },
    label: string,
  ): Promise<{ artifacts: ResolvedArtifact[]; warnings: string[] }>;
  /**
   * The archive is the application scanned on its own: a plain jar's declared dependencies are resolved
   * (a jar among others in a scanned folder is a library whose dependencies are its neighbours).
   */
  application: boolean;
  /** A POM beside the scanned jar (`<name>.pom`, `pom.xml`), for a jar that embeds none. */
  besidePom?: { raw: RawPom; path: string; label: string };
  limits?: Partial<ArchiveLimits>;
}

const NESTED_LIB =
  /^(?:WEB-INF\/lib|BOOT-INF\/lib|lib|APP-INF\/lib)\/[^/]+\.(?:jar|war|rar)$|^[^/]+\.(?:jar|war|rar)$/;
const EMBEDDED_META = /^META-INF\/maven\/[^/]+\/[^/]+\/(pom\.properties|pom\.xml)$/;
/** Artifact types whose file is a jar of classes (what a lib folder would hold). */
const JAR_TYPES = new Set(["jar", "bundle", "ejb", "maven-plugin", "test-jar", "ejb-client"]);
const CONCURRENCY = 8;

const decoder = new TextDecoder();

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
export function manifestAttributes(text: string): Map<string, string> {
  const map = new Map<string, string>();
  const lines = text.replace(/\r?\n /g, "").split(/\r?\n/);
  for (const line of lines) {
    if (line === "") break;
    const i = line.indexOf(": ");
    if (i > 0) map.set(line.slice(0, i), line.slice(i + 2).trim());
  }
  return map;
}

interface Identity {
  gav: Gav;
  evidence: "pom.properties" | "pom.xml";
  pomXml?: string;
  pomLabel: string;
}

/** The Maven identities a jar's embedded metadata gives (several for a shaded jar). */
function embeddedIdentities(archive: ZipArchive, files: ReadonlyMap<string, Uint8Array>): Identity[] {
  const found = new Map<string, Identity>();
  const dirs = new Set<string>();
  for (const name of files.keys()) if (EMBEDDED_META.test(name)) dirs.add(name.replace(/[^/]+$/, ""));
  for (const dir of [...dirs].sort()) {
    const props = files.get(`${dir}pom.properties`);
    const xml = files.get(`${dir}pom.xml`);
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
        // an unreadable embedded POM identifies nothing; the SHA-1 look-up may still
      }
    }
    if (gav) {
      found.set(`${gav.groupId}:${gav.artifactId}`, {
        gav,
        evidence,
        pomXml: xmlText,
        pomLabel: `${archive.label}!/${dir}pom.xml`,
      });
    }
  }
  return [...found.values()];
}

/** The identity whose POM a jar's own dependencies come from: the one its file name carries, else the only one. */
function primaryIdentity(identities: Identity[], label: string): Identity | undefined {
  const base = label.replace(/^.*[/!]/, "");
  const named = identities.find((i) => base.startsWith(`${i.gav.artifactId}-${i.gav.version}`));
  return named ?? (identities.length === 1 ? identities[0] : undefined);
}

/**
 * The jar's own coordinates from the POM beside it (a repository's `<name>.pom`, a build's `pom.xml`): only
 * when they are literal and the jar's file name carries them (`<artifactId>-<version>`), so an unrelated
 * POM never names the jar.
 */
function besideIdentity(pom: ReadArchiveOptions["besidePom"], label: string): Gav | undefined {
  if (!pom) return undefined;
  const groupId = pom.raw.groupId ?? pom.raw.parent?.groupId;
  const artifactId = pom.raw.artifactId;
  const version = pom.raw.version ?? pom.raw.parent?.version;
  if (!groupId || !artifactId || !version || `${groupId}${artifactId}${version}`.includes("${"))
    return undefined;
  const base = label.replace(/^.*[/!]/, "");
  return base.startsWith(`${artifactId}-${version}`) ? { groupId, artifactId, version } : undefined;
}

function sha1Of(archive: ZipArchive): string {
  const hash = createHash("sha1");
  const { source } = archive;
  for (let at = 0; at < source.size; at += 1 << 20)
    hash.update(source.read(at, Math.min(1 << 20, source.size - at)));
  return hash.digest("hex");
}

/** Java packages holding most of the jar's classes (a groupId often is, or starts, one of them). */
function classPackages(archive: ZipArchive): string[] {
  const counts = new Map<string, number>();
  for (const { name } of archive.entries) {
    if (!name.endsWith(".class") || name.startsWith("META-INF/")) continue;
    const parts = name.split("/").slice(0, -1);
    for (let n = Math.min(parts.length, 4); n >= 2; n--) {
      const prefix = parts.slice(0, n).join(".");
      counts.set(prefix, (counts.get(prefix) ?? 0) + 1);
    }
  }
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1] || b[0].length - a[0].length)
    .slice(0, 6)
    .map(([prefix]) => prefix);
}

interface Scope {
  /** groupId:artifactId the embedding application's POM declares. */
  declared: ReadonlySet<string>;
  /** artifactId:version → groupIds, from the embedding application's resolved POM. */
  known: ReadonlyMap<string, string[]>;
}

interface PendingJar {
  facts: JarFacts;
  scope: Scope;
  /** The application jar itself (scanned alone, no POM inside or beside it). */
  application?: boolean;
  /** When it was packaged (packaged-at.ts): once its checksum names a release, that release's. */
  packagedMs: number | null;
}

interface ResolvedSet {
  /** The POM the artifacts come from (their packages' location). */
  pomLabel: string;
  artifacts: ResolvedArtifact[];
  warnings: string[];
  /** Whether the archive ships dependency jars (then the optional ones it lacks were left out by choice). */
  shipsLibraries: boolean;
}

class Walk {
  readonly result: ArchiveContents = { packages: [], warnings: [] };
  readonly pending: PendingJar[] = [];
  readonly resolved: ResolvedSet[] = [];
  readonly options: ReadArchiveOptions;

  constructor(options: ReadArchiveOptions) {
    this.options = options;
  }

  warn(message: string): void {
    this.result.warnings.push(message);
  }

  /** Small entries by name; one that cannot be read is a warning and is left out. */
  readEntries(archive: ZipArchive, wanted: (name: string) => boolean): Map<string, Uint8Array> {
    const files = new Map<string, Uint8Array>();
    for (const entry of archive.entries) {
      if (!wanted(entry.name)) continue;
      if (archive.budget.exhausted) break;
      try {
        files.set(entry.name, archive.read(entry));
      } catch (error) {
        if (!(error instanceof ArchiveFormatError || error instanceof ArchiveLimitError)) throw error;
        this.warn(error.message);
      }
    }
    return files;
  }

  async resolve(
    pom: { raw: RawPom; path?: string },
    pomLabel: string,
    shipsLibraries: boolean,
  ): Promise<ResolvedArtifact[]> {
    try {
      const { artifacts, warnings } = await this.options.resolvePom(pom, pomLabel);
      this.resolved.push({ pomLabel, artifacts, warnings, shipsLibraries });
      return artifacts;
    } catch (error) {
      this.warn(`${pomLabel}: could not be resolved (${(error as Error).message})`);
      return [];
    }
  }

  async visit(archive: ZipArchive, scope: Scope): Promise<void> {
    const names = archive.entries.map((e) => e.name);
    const files = this.readEntries(
      archive,
      (name) => EMBEDDED_META.test(name) || name === "META-INF/MANIFEST.MF",
    );
    const isContainer =
      /\.(?:war|ear)$/i.test(archive.label) ||
      names.some(
        (n) => n.startsWith("WEB-INF/") || n.startsWith("BOOT-INF/") || n === "META-INF/application.xml",
      );
    const identities = embeddedIdentities(archive, files);
    const isDeclared = (gav: Gav) => scope.declared.has(`${gav.groupId}:${gav.artifactId}`);

    if (!isContainer) {
      for (const identity of identities) {
        this.result.packages.push({
          ...identity.gav,
          location: archive.label,
          evidence: identity.evidence,
          direct: isDeclared(identity.gav),
        });
      }
      const beside =
        identities.length === 0 && archive.depth === 0 && this.options.application
          ? besideIdentity(this.options.besidePom, archive.label)
          : undefined;
      if (beside) {
        this.result.packages.push({ ...beside, location: archive.label, evidence: "pom.xml", direct: false });
      } else if (identities.length === 0) {
        const mf = files.get("META-INF/MANIFEST.MF");
        this.pending.push({
          facts: {
            label: archive.label,
            sha1: sha1Of(archive),
            manifest: mf ? manifestAttributes(decoder.decode(mf)) : new Map(),
            classPackages: classPackages(archive),
          },
          scope,
          application: archive.depth === 0 && this.options.application,
          packagedMs: packagedAt(archive.entries),
        });
      }
      if (archive.depth === 0 && this.options.application) {
        const primary = primaryIdentity(identities, archive.label);
        if (primary?.pomXml) await this.resolve({ raw: parsePom(primary.pomXml) }, primary.pomLabel, false);
        else if (this.options.besidePom) {
          const beside = this.options.besidePom;
          await this.resolve({ raw: beside.raw, path: beside.path }, beside.label, false);
        }
      }
      return;
    }

    // the application's own POM: which nested libraries it declares, what its tree resolves to
    const nested = archive.entries
      .filter((e) => NESTED_LIB.test(e.name))
      .sort((a, b) => (a.name < b.name ? -1 : 1));
    const declared = new Set<string>();
    const known = new Map<string, string[]>();
    for (const identity of identities) {
      if (!identity.pomXml) continue;
      let raw: RawPom;
      try {
        raw = parsePom(identity.pomXml);
      } catch (error) {
        this.warn(`${identity.pomLabel}: ${(error as Error).message}`);
        continue;
      }
      for (const d of raw.dependencies) declared.add(`${d.groupId}:${d.artifactId}`);
      for (const a of await this.resolve({ raw }, identity.pomLabel, nested.length > 0)) {
        const key = `${a.artifactId}:${a.version}`;
        known.set(key, [...(known.get(key) ?? []), a.groupId]);
      }
    }
    // one nested archive open at a time: inflated (or read in place), read, closed
    for (const entry of nested) {
      if (archive.budget.exhausted) break;
      let inner: ZipArchive;
      try {
        inner = await archive.openNested(entry);
      } catch (error) {
        if (!(error instanceof ArchiveFormatError || error instanceof ArchiveLimitError)) throw error;
        const label = archive.entryLabel(entry);
        this.warn(error.message.startsWith(label) ? error.message : `${label}: ${error.message}`);
        continue;
      }
      try {
        await this.visit(inner, { declared, known });
      } finally {
        inner.close();
      }
    }
  }

  /**
   * The jars without Maven metadata, identified once every other jar of the archive is known; again with
   * the ones a round identified (spring-jcl is found by spring-core's groupId once spring-core is).
   */
  async identifyPending(): Promise<void> {
    let searched = this.options.identify.search !== undefined;
    const context: IdentifyContext = {
      ...this.options.identify,
      warn: (m) => {
        searched = false;
        this.warnOnce(m);
      },
    };
    let pending = this.pending;
    for (let round = 0; pending.length > 0 && round < 3; round++) {
      const siblings: Sibling[] = this.result.packages.map(({ groupId, artifactId }) => ({
        groupId,
        artifactId,
      }));
      const found: (ArchivePackage | undefined)[] = new Array(pending.length);
      let next = 0;
      const current = pending;
      const worker = async () => {
        while (next < current.length) {
          const i = next++;
          const { facts, scope } = current[i] as PendingJar;
          const parts = /([^/]+?)-(\d[^/]*)\.(?:jar|war|rar)$/i.exec(facts.label);
          const known = parts ? (scope.known.get(`${parts[1]}:${parts[2]}`) ?? []) : [];
          const identified = await identifyJar(facts, known, siblings, context);
          if (identified) {
            found[i] = {
              ...identified.gav,
              location: facts.label,
              evidence: identified.evidence,
              direct: scope.declared.has(`${identified.gav.groupId}:${identified.gav.artifactId}`),
            };
          }
        }
      };
      await Promise.all(Array.from({ length: CONCURRENCY }, worker));
      for (const f of found) if (f) this.result.packages.push(f);
      // A jar its checksum names is the repository's jar: its packaging time, read here, spares the
      // release-date look-up its ranged request.
      for (const [i, f] of found.entries()) {
        const packagedMs = current[i]?.packagedMs ?? null;
        if (!f || packagedMs === null || !context.memo) continue;
        const jarUrl = repositoryUrl(context.repositoryUrl, f, "jar");
        context.memo.set(packagedAtKey(jarUrl), { ms: packagedMs });
      }
      // A jar published without Maven metadata inside (Gradle builds: okhttp, micrometer, poi, kafka-clients)
      // and scanned on its own: once its checksum names it, the POM the repository publishes for it is its
      // POM, resolved as Maven would resolve the jar's dependencies.
      for (const [i, f] of found.entries()) {
        if (!f || !current[i]?.application) continue;
        const gav = { groupId: f.groupId, artifactId: f.artifactId, version: f.version };
        const pom = await context.repository.pom(gav);
        const label = `${f.groupId}:${f.artifactId}:${f.version} (the repository's POM)`;
        if (pom.kind !== "found") {
          this.warn(
            `${(current[i] as PendingJar).facts.label}: its dependencies are not listed (${pom.reason})`,
          );
          continue;
        }
        try {
          await this.resolve({ raw: parsePom(pom.text) }, label, false);
        } catch (error) {
          this.warn(`${label}: ${(error as Error).message}`);
        }
      }
      pending = current.filter((_, i) => !found[i]);
      if (pending.length === current.length) break;
    }
    for (const { facts } of pending) {
      this.warn(
        `${facts.label}: not identified (no Maven metadata inside, and its SHA-1 matches no candidate coordinates in the repository${searched ? " nor any the search service knows" : ""})`,
      );
    }
  }

  readonly #said = new Set<string>();
  warnOnce(message: string): void {
    if (this.#said.has(message)) return;
    this.#said.add(message);
    this.warn(message);
  }

  /** What the POMs resolve to and no jar of the archive provides. */
  addResolved(): void {
    const present = new Set(this.result.packages.map((p) => `${p.groupId}:${p.artifactId}`));
    for (const set of this.resolved) {
      const added: ArchivePackage[] = [];
      for (const a of set.artifacts) {
        if (a.scope !== "compile" && a.scope !== "runtime") continue;
        if (!JAR_TYPES.has(a.type)) continue;
        const key = `${a.groupId}:${a.artifactId}`;
        if (present.has(key) || (set.shipsLibraries && a.optional)) continue;
        present.add(key);
        added.push({
          groupId: a.groupId,
          artifactId: a.artifactId,
          version: a.version,
          location: set.pomLabel,
          evidence: "resolved POM",
          direct: a.depth === 1,
        });
      }
      this.result.packages.push(...added);
      // a fat jar shipping all it declares needs no word about its POM's parents
      if (!set.shipsLibraries || added.length > 0) for (const w of set.warnings) this.warn(w);
    }
  }
}

/**
 * Reads the archive file at `path` (label: how it is shown). A war, an ear or a Spring Boot jar is the
 * application itself: its own identity is not a package, the libraries nested in it are. A plain jar is a
 * library: its embedded identities are packages. Throws ArchiveFormatError or ArchiveLimitError when the
 * archive itself cannot be read; nested archives that cannot be read are warnings.
 */
export async function readArchive(
  path: string,
  label: string,
  options: ReadArchiveOptions,
): Promise<ArchiveContents> {
  const budget = new InflateBudget(options.limits);
  const archive = ZipArchive.openFile(path, label, budget);
  const walk = new Walk(options);
  try {
    await walk.visit(archive, { declared: new Set(), known: new Map() });
  } finally {
    archive.close();
  }
  await walk.identifyPending();
  walk.addResolved();
  return walk.result;
}
