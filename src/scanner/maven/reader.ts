/**
 * The Maven input reader of `imaging scan`: `pom.xml` projects (their effective dependency tree, resolved
 * as Maven does), `gradle.lockfile`s, and jar/war/ear archives.
 */
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { basename, dirname, join, relative, sep } from "node:path";
import type { InputReader, Inventory, InventoryPackage, ReaderContext } from "../inventory.ts";
import { ScanInputError } from "../inventory.ts";
import { mavenScope, widerScope } from "../scope.ts";
import { ArchiveFormatError, ArchiveLimitError, readArchive } from "./archive.ts";
import { resolveDependencies } from "./dependency-graph.ts";
import { DEFAULT_ENVIRONMENT, type MavenEnvironment } from "./environment.ts";
import { parseGradleLockfile } from "./gradle-lockfile.ts";
import { interpolateString, ModelBuilder, type PomFile } from "./model-builder.ts";
import { PomSyntaxError, parsePom, type RawPom } from "./pom-xml.ts";
import { createMavenRepository, type MavenRepository } from "./repository.ts";
import { createArtifactSearch } from "./search-service.ts";

const LEGACY_LOCKFILE = /(?:^|\/)gradle\/dependency-locks\/[^/]+\.lockfile$/;
/** Build tooling checked into repositories, not part of the application. */
const WRAPPER_JAR = /(?:^|\/)(?:gradle\/wrapper\/gradle-wrapper|\.mvn\/wrapper\/maven-wrapper)\.jar$/;

export const mavenReader: InputReader = {
  name: "maven",
  claims(relativePath) {
    const name = relativePath.slice(relativePath.lastIndexOf("/") + 1);
    if (name === "pom.xml" || name === "gradle.lockfile" || LEGACY_LOCKFILE.test(relativePath)) return true;
    return /\.(?:jar|war|ear)$/i.test(name) && !WRAPPER_JAR.test(relativePath);
  },
  async read(files, context) {
    const inventory: Inventory = { packages: [], warnings: [] };
    const label = (file: string) => relative(context.root, file).split(sep).join("/") || basename(file);
    const repository = createMavenRepository({
      fetcher: context.fetcher,
      remoteUrl: context.mavenRepositoryUrl,
      localRepository: context.mavenLocalRepository,
    });
    const poms = files.filter((f) => basename(f) === "pom.xml");
    const lockfiles = files.filter(
      (f) => basename(f) === "gradle.lockfile" || LEGACY_LOCKFILE.test(label(f)),
    );
    const archives = files.filter((f) => /\.(?:jar|war|ear)$/i.test(f) && !WRAPPER_JAR.test(label(f)));

    await readPoms(poms, context, repository, label, inventory);
    for (const file of lockfiles) await readLockfile(file, label(file), inventory);
    for (const file of archives) await readArchiveFile(file, label(file), repository, context, inventory);
    return { packages: dedupe(inventory.packages), warnings: dedupeWarnings(inventory.warnings) };
  },
};

async function parsePomFile(path: string, fileLabel: string): Promise<PomFile> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw new ScanInputError(
      fileLabel,
      `cannot read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
  try {
    return { path, raw: parsePom(text) };
  } catch (error) {
    if (error instanceof PomSyntaxError) throw new ScanInputError(fileLabel, error.message, error.line);
    throw error;
  }
}

/**
 * A pom.xml under another project's `src/` is a test resource or an archetype template, not a project
 * Maven would build.
 */
function isProjectPom(path: string, all: ReadonlySet<string>): boolean {
  let dir = dirname(path);
  while (true) {
    const parent = dirname(dir);
    if (parent === dir) return true;
    if (basename(dir) === "src" && all.has(join(parent, "pom.xml"))) return false;
    dir = parent;
  }
}

/** `-Dname=value` options of the nearest `.mvn/maven.config` (Maven reads it from the project root). */
async function environmentFor(pomPath: string, root: string): Promise<MavenEnvironment> {
  let dir = dirname(pomPath);
  while (true) {
    const config = join(dir, ".mvn", "maven.config");
    if (existsSync(config)) {
      const userProperties = new Map<string, string>();
      const text = await readFile(config, "utf8").catch(() => "");
      for (const token of text.split(/\s+/)) {
        const match = /^-D([^=]+)(?:=(.*))?$/.exec(token);
        if (match) userProperties.set(match[1] as string, match[2] ?? "true");
      }
      return { ...DEFAULT_ENVIRONMENT, userProperties };
    }
    const parent = dirname(dir);
    if (parent === dir || !`${dir}${sep}`.startsWith(`${root}${sep}`) || dir === root) break;
    dir = parent;
  }
  return DEFAULT_ENVIRONMENT;
}

/** The coordinates a POM on disk gives itself (for the reactor), when literal enough to be known. */
function workspaceKey(file: PomFile, env: MavenEnvironment): string | undefined {
  const raw = file.raw;
  const lookup = (name: string) => env.userProperties.get(name) ?? raw.properties.get(name);
  const groupId = raw.groupId ?? raw.parent?.groupId;
  const version = raw.version ?? raw.parent?.version;
  if (!groupId || !raw.artifactId || !version) return undefined;
  const key = interpolateString(`${groupId}:${raw.artifactId}:${version}`, lookup);
  return key.includes("${") ? undefined : key;
}

async function readPoms(
  paths: string[],
  context: ReaderContext,
  repository: MavenRepository,
  label: (file: string) => string,
  inventory: Inventory,
): Promise<void> {
  if (paths.length === 0) return;
  const all = new Set(paths);
  const projects = paths.filter((p) => isProjectPom(p, all)).sort();
  const files = await Promise.all(projects.map((p) => parsePomFile(p, label(p))));
  const builders = new Map<string, ModelBuilder>();
  const workspace = new Map<string, PomFile>();
  const environments = await Promise.all(files.map((f) => environmentFor(f.path, context.root)));
  for (const [i, file] of files.entries()) {
    const key = workspaceKey(file, environments[i] as MavenEnvironment);
    if (key && !workspace.has(key)) workspace.set(key, file);
  }
  let current = "";
  const warn = (message: string) => inventory.warnings.push({ file: current, message });
  for (const [i, file] of files.entries()) {
    current = label(file.path);
    const env = environments[i] as MavenEnvironment;
    const envKey = JSON.stringify([...env.userProperties]);
    let builder = builders.get(envKey);
    if (!builder) {
      builder = new ModelBuilder({ repository, env, workspace, warn });
      builders.set(envKey, builder);
    }
    context.progress(`maven: resolving ${current}`);
    const model = await builder.buildFile(file);
    const artifacts = await resolveDependencies(model, {
      builder,
      repository,
      warn,
      isWorkspaceArtifact: (gav) => workspace.has(`${gav.groupId}:${gav.artifactId}:${gav.version}`),
    });
    for (const a of artifacts) {
      inventory.packages.push({
        ecosystem: "maven",
        name: `${a.groupId}:${a.artifactId}`,
        version: a.version,
        dev: a.scope === "test" || a.scope === "provided",
        scope: mavenScope(a.scope),
        direct: a.depth === 1,
        source: current,
      });
    }
    context.progress(`maven: ${current}: ${artifacts.length} dependencies`);
  }
}

async function readLockfile(file: string, fileLabel: string, inventory: Inventory): Promise<void> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    throw new ScanInputError(
      fileLabel,
      `cannot read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
  const legacy = LEGACY_LOCKFILE.test(fileLabel);
  const modules = parseGradleLockfile(text, fileLabel, legacy ? basename(file, ".lockfile") : undefined);
  // the lockfile does not say which modules the build declares itself: the build script next to it does
  const projectDir = legacy ? dirname(dirname(dirname(file))) : dirname(file);
  const script = (
    await Promise.all(
      ["build.gradle", "build.gradle.kts"].map((n) => readFile(join(projectDir, n), "utf8").catch(() => "")),
    )
  ).join("\n");
  for (const m of modules) {
    inventory.packages.push({
      ecosystem: "maven",
      name: `${m.groupId}:${m.artifactId}`,
      version: m.version,
      dev: m.dev,
      scope: m.scope,
      direct: declaredIn(script, `${m.groupId}:${m.artifactId}`),
      source: fileLabel,
    });
  }
}

async function readArchiveFile(
  file: string,
  fileLabel: string,
  repository: MavenRepository,
  context: ReaderContext,
  inventory: Inventory,
): Promise<void> {
  context.progress(`maven: reading ${fileLabel}`);
  const application = Boolean(context.singleFile);
  try {
    const contents = await readArchive(file, fileLabel, {
      application,
      besidePom: application ? await pomBeside(file, fileLabel) : undefined,
      identify: {
        repository,
        repositoryUrl: context.mavenRepositoryUrl,
        memo: context.fetcher.answers,
        search:
          context.mavenSearchUrl && !context.offline
            ? createArtifactSearch(context.fetcher, context.mavenSearchUrl)
            : undefined,
      },
      async resolvePom(pom, label) {
        context.progress(`maven: resolving ${label}`);
        const warnings: string[] = [];
        // the builder's warnings name the POM they are about; one builder per POM keeps them apart
        const own = new ModelBuilder({
          repository,
          env: DEFAULT_ENVIRONMENT,
          workspace: new Map(),
          warn: (m) => warnings.push(m),
        });
        const model = pom.path
          ? await own.buildFile({ path: pom.path, raw: pom.raw })
          : await own.buildEmbedded(pom.raw, label);
        const artifacts = await resolveDependencies(model, {
          builder: own,
          repository,
          warn: (m) => warnings.push(m),
        });
        return { artifacts, warnings: warnings.map((w) => `${label}: ${w}`) };
      },
    });
    for (const p of contents.packages) {
      inventory.packages.push({
        ecosystem: "maven",
        name: `${p.groupId}:${p.artifactId}`,
        version: p.version,
        dev: false,
        // Packaged in the archive: on its runtime class path (whether the code compiled against it is not kept).
        scope: "runtime",
        direct: p.direct || p.location === fileLabel,
        source: p.location,
      });
    }
    for (const message of contents.warnings) inventory.warnings.push({ file: fileLabel, message });
  } catch (error) {
    if (!(error instanceof ArchiveFormatError || error instanceof ArchiveLimitError)) throw error;
    const reason = error.message.startsWith(`${fileLabel}: `)
      ? error.message.slice(fileLabel.length + 2)
      : error.message;
    // The archive scanned by itself is the whole input: refuse it. One corrupt archive among a
    // directory's inputs is a warning, and the scan goes on with the others.
    if (context.singleFile) throw new ScanInputError(fileLabel, reason);
    inventory.warnings.push({ file: fileLabel, message: `${reason}: its packages are not listed` });
  }
}

/**
 * The POM published beside a jar that embeds none: `<name>.pom` (a repository's layout) or `pom.xml`
 * (a build's output folder next to its project).
 */
async function pomBeside(
  file: string,
  fileLabel: string,
): Promise<{ raw: RawPom; path: string; label: string } | undefined> {
  const dir = dirname(file);
  for (const name of [basename(file).replace(/\.(?:jar|war|ear)$/i, ".pom"), "pom.xml"]) {
    const path = join(dir, name);
    let text: string;
    try {
      text = await readFile(path, "utf8");
    } catch {
      continue;
    }
    const label = fileLabel.includes("/") ? `${fileLabel.replace(/[^/]+$/, "")}${name}` : name;
    try {
      return { raw: parsePom(text), path, label };
    } catch (error) {
      if (error instanceof PomSyntaxError) throw new ScanInputError(label, error.message, error.line);
      throw error;
    }
  }
  return undefined;
}

/** Whether a build script names group:artifact (not merely a longer artifact name starting with it). */
function declaredIn(script: string, coordinates: string): boolean {
  const escaped = coordinates.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`${escaped}(?![A-Za-z0-9._-])`).test(script);
}

/** One entry per package version: dev only if dev everywhere, direct if direct anywhere, the widest scope. */
function dedupe(packages: InventoryPackage[]): InventoryPackage[] {
  const byKey = new Map<string, InventoryPackage>();
  for (const p of packages) {
    const key = `${p.name}@${p.version}`;
    const seen = byKey.get(key);
    if (!seen) byKey.set(key, { ...p });
    else {
      seen.dev &&= p.dev;
      seen.direct ||= p.direct;
      seen.scope = widerScope(seen.scope, p.scope);
    }
  }
  return [...byKey.values()];
}

function dedupeWarnings(warnings: Inventory["warnings"]): Inventory["warnings"] {
  const seen = new Set<string>();
  return warnings.filter((w) => {
    const key = `${w.file}\n${w.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
