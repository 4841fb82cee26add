/**
 * The effective model of a POM, built in Maven's order (DefaultModelBuilder): profile activation per POM of
 * the lineage, inheritance from the parents (relativePath first for POMs on disk, then the repositories),
 * interpolation of `${...}` against the inherited model, import of `scope=import` BOMs, then injection of
 * dependencyManagement into the dependencies. A parent or BOM that cannot be found is a warning.
 */
import { readFile, stat } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { type Dependency, type Gav, gavText, managementKey } from "./coordinates.ts";
import { activeProfiles, type MavenEnvironment, systemProperties } from "./environment.ts";
import { parsePom, type RawDependency, type RawModelBase, type RawPom } from "./pom-xml.ts";
import type { MavenRepository } from "./repository.ts";

export interface EffectiveModel {
  gav: Gav;
  packaging: string;
  /** Declared dependencies, in Maven's order (the POM's own, then inherited ones), management applied. */
  dependencies: Dependency[];
  /** dependencyManagement after inheritance and BOM imports (never contains the import entries). */
  dependencyManagement: Dependency[];
  modules: string[];
  /** `distributionManagement.relocation`: this artifact moved (the resolver follows it). */
  relocation?: Gav;
}

/** A POM on disk (a project being scanned, or one of its local parents). */
export interface PomFile {
  path: string;
  raw: RawPom;
}

interface LineageEntry {
  raw: RawPom;
  /** The POM's directory when it is a file on disk (relativePath, file activation, ${basedir}). */
  dir: string | undefined;
}

interface ModelBuilderOptions {
  repository: MavenRepository;
  env: MavenEnvironment;
  /** POMs of the scanned tree by groupId:artifactId:version: found there before any repository (the reactor). */
  workspace: ReadonlyMap<string, PomFile>;
  /** A problem that did not stop the resolution (missing parent, BOM, version). */
  warn(message: string): void;
}

const MAX_DEPTH = 32;

export class ModelBuilder {
  readonly #options: ModelBuilderOptions;
  readonly #repositoryModels = new Map<string, Promise<EffectiveModel | undefined>>();
  readonly #rawPoms = new Map<string, Promise<RawPom | undefined>>();

  constructor(options: ModelBuilderOptions) {
    this.#options = options;
  }

  /** The effective model of a POM file of the scanned tree. */
  async buildFile(file: PomFile): Promise<EffectiveModel> {
    return this.#build({ raw: file.raw, dir: dirname(file.path) }, file.path, []);
  }

  /** The effective model of a POM that is not a file (one embedded in an archive): parents from repositories. */
  async buildEmbedded(raw: RawPom, label: string): Promise<EffectiveModel> {
    return this.#build({ raw, dir: undefined }, label, []);
  }

  /** The effective model of groupId:artifactId:version from the workspace or the repositories. */
  buildArtifact(gav: Gav, chain: readonly string[] = []): Promise<EffectiveModel | undefined> {
    const key = gavText(gav);
    let model = this.#repositoryModels.get(key);
    if (!model) {
      model = (async () => {
        const workspace = this.#options.workspace.get(key);
        if (workspace) return this.#build({ raw: workspace.raw, dir: dirname(workspace.path) }, key, chain);
        const raw = await this.#rawArtifact(gav);
        return raw ? this.#build({ raw, dir: undefined }, key, chain) : undefined;
      })();
      this.#repositoryModels.set(key, model);
    }
    return model;
  }

  /** Why a POM could not be had, memoised with the POM itself. */
  readonly missingReasons = new Map<string, string>();

  #rawArtifact(gav: Gav): Promise<RawPom | undefined> {
    const key = gavText(gav);
    let raw = this.#rawPoms.get(key);
    if (!raw) {
      raw = (async () => {
        const answer = await this.#options.repository.pom(gav);
        if (answer.kind === "missing") {
          this.missingReasons.set(key, answer.reason);
          return undefined;
        }
        try {
          return parsePom(answer.text, { validate: false });
        } catch (error) {
          this.missingReasons.set(key, `${key}: unreadable POM (${(error as Error).message})`);
          return undefined;
        }
      })();
      this.#rawPoms.set(key, raw);
    }
    return raw;
  }

  async #build(entry: LineageEntry, label: string, chain: readonly string[]): Promise<EffectiveModel> {
    const lineage = await this.#lineage(entry, label);
    const merged = inherit(lineage, this.#options.env);
    const child = lineage[0] as LineageEntry;
    const model = interpolateModel(merged, child, this.#options.env);
    const selfKey = gavText(model.gav);
    const imported = await this.#importBoms(model.dependencyManagement, label, [...chain, selfKey]);
    const dependencies = injectManagement(model.dependencies, imported);
    return {
      gav: model.gav,
      packaging: model.packaging,
      dependencies,
      dependencyManagement: imported,
      modules: merged.modules,
      relocation: model.relocation,
    };
  }

  /** The POM followed by its parents, each with its active profiles applied. */
  async #lineage(entry: LineageEntry, label: string): Promise<LineageEntry[]> {
    const lineage: LineageEntry[] = [];
    const seen = new Set<string>();
    let current: LineageEntry | undefined = entry;
    let currentLabel = label;
    while (current) {
      lineage.push({ raw: applyProfiles(current.raw, this.#options.env, current.dir), dir: current.dir });
      const parent: RawPom["parent"] = current.raw.parent;
      if (!parent) break;
      const version = resolveParentVersion(parent.version, current.raw, this.#options.env);
      if (!parent.groupId || !parent.artifactId || !version) {
        this.#options.warn(`${currentLabel}: incomplete <parent> declaration`);
        break;
      }
      const gav: Gav = { groupId: parent.groupId, artifactId: parent.artifactId, version };
      const key = gavText(gav);
      if (seen.has(key) || lineage.length > MAX_DEPTH) {
        this.#options.warn(`${currentLabel}: parent POM cycle at ${key}`);
        break;
      }
      seen.add(key);
      const local: PomFile | undefined =
        current.dir === undefined ? undefined : await readLocalParent(current.dir, parent, version);
      if (local) {
        current = { raw: local.raw, dir: dirname(local.path) };
      } else {
        const workspace: PomFile | undefined = this.#options.workspace.get(key);
        const raw: RawPom | undefined = workspace ? workspace.raw : await this.#rawArtifact(gav);
        if (!raw) {
          this.#options.warn(
            `parent POM ${key} of ${currentLabel} not found (${this.missingReasons.get(key) ?? "no such POM"}): ` +
              "what it declares (versions, dependencies, properties) is missing from the result",
          );
          break;
        }
        current = { raw, dir: workspace ? dirname(workspace.path) : undefined };
      }
      currentLabel = key;
    }
    return lineage;
  }

  async #importBoms(managed: Dependency[], label: string, chain: readonly string[]): Promise<Dependency[]> {
    const result = managed.filter((d) => !(d.scope === "import" && d.type === "pom"));
    const keys = new Set(result.map(managementKey));
    for (const bom of managed) {
      if (!(bom.scope === "import" && bom.type === "pom")) continue;
      if (!bom.version || bom.version.includes("${")) {
        this.#options.warn(`${label}: imported BOM ${bom.groupId}:${bom.artifactId} has no usable version`);
        continue;
      }
      const gav = { groupId: bom.groupId, artifactId: bom.artifactId, version: bom.version };
      const key = gavText(gav);
      if (chain.includes(key)) {
        this.#options.warn(`${label}: BOM import cycle at ${key}`);
        continue;
      }
      const model = await this.buildArtifact(gav, chain);
      if (!model) {
        this.#options.warn(
          `BOM ${key} imported by ${label} not found (${this.missingReasons.get(key) ?? "no such POM"}): ` +
            "the versions it manages are missing from the result",
        );
        continue;
      }
      for (const entry of model.dependencyManagement) {
        const k = managementKey(entry);
        if (!keys.has(k)) {
          keys.add(k);
          result.push(entry);
        }
      }
    }
    return result;
  }
}

/** Maven 3 resolves `${revision}`-style parent versions from user properties and the child's properties. */
function resolveParentVersion(version: string | undefined, child: RawPom, env: MavenEnvironment) {
  if (!version?.includes("${")) return version;
  const resolved = interpolateString(
    version,
    (name) => env.userProperties.get(name) ?? child.properties.get(name),
  );
  return resolved.includes("${") ? undefined : resolved;
}

async function readLocalParent(
  dir: string,
  parent: NonNullable<RawPom["parent"]>,
  version: string,
): Promise<PomFile | undefined> {
  if (parent.relativePath === "") return undefined;
  let path = resolve(dir, parent.relativePath ?? "../pom.xml");
  try {
    if ((await stat(path)).isDirectory()) path = join(path, "pom.xml");
    const raw = parsePom(await readFile(path, "utf8"));
    const groupId = raw.groupId ?? raw.parent?.groupId;
    const candidateVersion = raw.version ?? raw.parent?.version;
    if (groupId !== parent.groupId || raw.artifactId !== parent.artifactId) return undefined;
    if (candidateVersion !== version && !candidateVersion?.includes("${")) return undefined;
    return { path, raw };
  } catch {
    return undefined;
  }
}

function applyProfiles(pom: RawPom, env: MavenEnvironment, dir: string | undefined): RawPom {
  // a dependency declared twice in one POM: the last declaration wins, in the first one's place
  // (DefaultModelNormalizer.mergeDuplicates, before anything else)
  const unique = new Map<string, RawDependency>();
  for (const d of pom.dependencies) unique.set(rawKey(d), d);
  const raw = unique.size === pom.dependencies.length ? pom : { ...pom, dependencies: [...unique.values()] };
  const profiles = activeProfiles(raw.profiles, env, dir);
  if (profiles.length === 0) return raw;
  let base: RawModelBase = raw;
  // profile content dominates the POM's own (ModelMerger with sourceDominant = true)
  for (const profile of profiles) base = mergeBase(base, profile, true);
  return { ...raw, ...base };
}

const rawKey = (d: RawDependency) =>
  `${d.groupId}:${d.artifactId}:${d.type ?? "jar"}${d.classifier ? `:${d.classifier}` : ""}`;

function mergeDependencies(target: RawDependency[], source: RawDependency[], sourceDominant: boolean) {
  const merged = new Map<string, RawDependency>();
  for (const d of target) merged.set(rawKey(d), d);
  for (const d of source) {
    const key = rawKey(d);
    if (sourceDominant || !merged.has(key)) merged.set(key, d);
  }
  return [...merged.values()];
}

function mergeBase(target: RawModelBase, source: RawModelBase, sourceDominant: boolean): RawModelBase {
  const properties = sourceDominant
    ? new Map([...target.properties, ...source.properties])
    : new Map([...source.properties, ...target.properties]);
  return {
    properties,
    dependencies: mergeDependencies(target.dependencies, source.dependencies, sourceDominant),
    dependencyManagement: mergeDependencies(
      target.dependencyManagement,
      source.dependencyManagement,
      sourceDominant,
    ),
    modules: sourceDominant ? [...target.modules, ...source.modules] : target.modules,
  };
}

interface InheritedModel extends RawModelBase {
  groupId: string | undefined;
  version: string | undefined;
}

/** Folds the lineage from the topmost parent down: the child's values win, its dependencies come first. */
function inherit(lineage: LineageEntry[], _env: MavenEnvironment): InheritedModel {
  let model: InheritedModel | undefined;
  for (let i = lineage.length - 1; i >= 0; i--) {
    const raw = (lineage[i] as LineageEntry).raw;
    if (!model) {
      model = {
        ...raw,
        groupId: raw.groupId ?? raw.parent?.groupId,
        version: raw.version ?? raw.parent?.version,
      };
      continue;
    }
    model = {
      ...mergeBase(raw, model, false),
      groupId: raw.groupId ?? model.groupId ?? raw.parent?.groupId,
      version: raw.version ?? model.version ?? raw.parent?.version,
    };
  }
  return model as InheritedModel;
}

const EXPRESSION = /\$\{([^}]+)\}/g;

/** Replaces `${name}` from `lookup`, recursively; unknown or cyclic expressions stay as written. */
export function interpolateString(value: string, lookup: (name: string) => string | undefined): string {
  const expand = (text: string, stack: readonly string[]): string =>
    text.includes("${")
      ? text.replace(EXPRESSION, (whole, name: string) => {
          if (stack.includes(name)) return whole;
          const found = lookup(name);
          return found === undefined ? whole : expand(found, [...stack, name]);
        })
      : text;
  return expand(value, []);
}

interface InterpolatedModel {
  gav: Gav;
  packaging: string;
  dependencies: Dependency[];
  dependencyManagement: Dependency[];
  relocation?: Gav;
}

function interpolateModel(
  model: InheritedModel,
  child: LineageEntry,
  env: MavenEnvironment,
): InterpolatedModel {
  const raw = child.raw;
  const system = systemProperties(env);
  const projectFields = new Map<string, string | undefined>([
    ["groupId", model.groupId],
    ["artifactId", raw.artifactId],
    ["version", model.version],
    ["packaging", raw.packaging ?? "jar"],
    ["parent.groupId", raw.parent?.groupId],
    ["parent.artifactId", raw.parent?.artifactId],
    ["parent.version", raw.parent?.version],
    ["basedir", child.dir],
    ["build.directory", child.dir === undefined ? undefined : join(child.dir, "target")],
  ]);
  const lookup = (name: string): string | undefined => {
    for (const prefix of ["project.", "pom."]) {
      if (name.startsWith(prefix)) {
        const value = projectFields.get(name.slice(prefix.length));
        if (value !== undefined) return value;
      }
    }
    if (name === "basedir") return child.dir;
    return (
      env.userProperties.get(name) ??
      model.properties.get(name) ??
      system.get(name) ??
      // Maven 2 style unprefixed model expressions, still honoured by Maven 3
      (name === "version" || name === "groupId" || name === "artifactId"
        ? projectFields.get(name)
        : undefined)
    );
  };
  const value = (text: string | undefined) =>
    text === undefined ? undefined : interpolateString(text, lookup);
  const dependency = (d: RawDependency): Dependency => {
    const optional = value(d.optional);
    return {
      groupId: value(d.groupId) ?? "",
      artifactId: value(d.artifactId) ?? "",
      version: value(d.version),
      type: value(d.type) ?? "jar",
      classifier: value(d.classifier) ?? "",
      scope: value(d.scope),
      optional: optional === undefined ? undefined : optional.trim() === "true",
      exclusions: d.exclusions.map((e) => ({
        groupId: value(e.groupId) ?? "*",
        artifactId: value(e.artifactId) ?? "*",
      })),
    };
  };
  const gav = {
    groupId: value(model.groupId) ?? "",
    artifactId: value(raw.artifactId) ?? "",
    version: value(model.version) ?? "",
  };
  const relocation = raw.relocation && {
    groupId: value(raw.relocation.groupId) ?? gav.groupId,
    artifactId: value(raw.relocation.artifactId) ?? gav.artifactId,
    version: value(raw.relocation.version) ?? gav.version,
  };
  return {
    gav,
    packaging: value(raw.packaging) ?? "jar",
    dependencies: model.dependencies.map(dependency),
    dependencyManagement: model.dependencyManagement.map(dependency),
    relocation,
  };
}

/** Fills what a dependency leaves out from the managed entry of the same key (DependencyManagementInjector). */
function injectManagement(dependencies: Dependency[], managed: Dependency[]): Dependency[] {
  const byKey = new Map<string, Dependency>();
  for (const m of managed) if (!byKey.has(managementKey(m))) byKey.set(managementKey(m), m);
  return dependencies.map((d) => {
    const m = byKey.get(managementKey(d));
    if (!m) return d;
    return {
      ...d,
      version: d.version ?? m.version,
      scope: d.scope ?? m.scope,
      optional: d.optional ?? m.optional,
      exclusions: d.exclusions.length > 0 ? d.exclusions : m.exclusions,
    };
  });
}
