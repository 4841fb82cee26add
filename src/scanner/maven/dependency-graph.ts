/**
 * The transitive dependencies of a project, resolved as Maven 3 (maven-resolver) does:
 * - transitive dependencies come from each dependency's own effective POM, without its test and provided
 *   ones, without its optional ones, minus every exclusion declared on the path (wildcards included);
 * - the project's dependencyManagement (BOMs included) sets version, scope, optional and adds exclusions for
 *   every transitive dependency (not for direct ones: the model already applied it);
 * - version conflicts (same groupId:artifactId:extension:classifier) go to the nearest node, the first
 *   declared one among equally near ones; only the winners' dependencies are followed;
 * - scopes derive along the path (compile under runtime is runtime, anything under test is test...), and a
 *   winner takes the widest scope among all the places it appears, or the direct dependency's own.
 * Levels are resolved one at a time, every POM of a level fetched concurrently.
 */
import { compareMavenVersions } from "../../domain/versions/maven-version.ts";
import {
  artifactOf,
  conflictKey,
  type Dependency,
  type Exclusion,
  excludes,
  type Gav,
  gavText,
} from "./coordinates.ts";
import type { EffectiveModel, ModelBuilder } from "./model-builder.ts";
import type { MavenRepository } from "./repository.ts";
import { isVersionRange, parseVersionRange, rangeContains } from "./version-range.ts";

interface ResolvedArtifact {
  groupId: string;
  artifactId: string;
  version: string;
  type: string;
  classifier: string;
  scope: string;
  optional: boolean;
  /** 1 for a direct dependency of the project. */
  depth: number;
}

interface ResolveOptions {
  builder: ModelBuilder;
  repository: MavenRepository;
  warn(message: string): void;
  /** Artifacts that are the scanned project's own modules: resolved through, never reported. */
  isWorkspaceArtifact?(gav: Gav): boolean;
}

/** One place a dependency appears in the graph (maven-resolver's ConflictItem). */
interface Item {
  key: string;
  /** The winner node this item hangs under; undefined for the project's direct dependencies. */
  parent: Node | undefined;
  dependency: Dependency;
  depth: number;
}

interface Node {
  key: string;
  gav: Gav;
  dependency: Dependency;
  depth: number;
  /** Exclusions in force for this node's children: every exclusion on the path to it, its own included. */
  exclusions: Exclusion[];
  items: Item[];
  scope: string;
  optional: boolean;
  /** Its effective POM; undefined when the POM could not be had (no dependencies followed). */
  model: EffectiveModel | undefined;
}

const SCOPE_ORDER = ["compile", "runtime", "provided", "test"];
const MAX_GRAPH_DEPTH = 64;

/** JavaScopeDeriver: the scope a dependency has when reached through a parent of scope `parent`. */
function deriveScope(parent: string | undefined, child: string): string {
  if (child === "system" || child === "test") return child;
  if (parent === undefined || parent === "compile") return child;
  if (parent === "test" || parent === "runtime") return parent;
  if (parent === "system" || parent === "provided") return "provided";
  return "runtime";
}

function widest(scopes: Set<string>): string {
  if (scopes.size > 1) scopes.delete("system");
  if (scopes.size === 1) return [...scopes][0] as string;
  for (const s of SCOPE_ORDER) if (scopes.has(s)) return s;
  return [...scopes][0] ?? "compile";
}

export async function resolveDependencies(
  project: EffectiveModel,
  options: ResolveOptions,
): Promise<ResolvedArtifact[]> {
  const managed = new Map<string, Dependency>();
  for (const m of project.dependencyManagement) {
    const key = conflictKey(m);
    if (!managed.has(key)) managed.set(key, m);
  }
  /** ClassicDependencyManager: the root's management applies in full from depth 2 on. */
  const manage = (d: Dependency): Dependency => {
    const m = managed.get(conflictKey(d));
    if (!m) return d;
    return {
      ...d,
      version: m.version ?? d.version,
      scope: m.scope ?? d.scope,
      optional: m.optional ?? d.optional,
      exclusions: [...d.exclusions, ...m.exclusions],
    };
  };

  const winners = new Map<string, Node>();
  const self = project.gav;
  const order: Node[] = [];
  // managed exclusions apply at every depth, direct dependencies included (their other managed values
  // were applied by the model already)
  const manageDirect = (d: Dependency): Dependency => {
    const m = managed.get(conflictKey(d));
    return m && m.exclusions.length > 0 ? { ...d, exclusions: [...d.exclusions, ...m.exclusions] } : d;
  };
  let level: Item[] = project.dependencies.map((d) => ({
    key: conflictKey(d),
    parent: undefined,
    dependency: manageDirect(d),
    depth: 1,
  }));

  while (level.length > 0) {
    // versions (ranges resolved) and descriptors of this level's candidates, fetched concurrently
    const candidates = level.filter((item) => !winners.has(item.key));
    const prepared = await Promise.all(
      candidates.map(async (item) => {
        const version = await resolveVersion(item.dependency, options);
        if (version === undefined) return undefined;
        const located = await locate(item.dependency, version, options);
        return { item, ...located };
      }),
    );
    const preparedByItem = new Map(prepared.filter((p) => p !== undefined).map((p) => [p.item, p]));
    const newWinners: Node[] = [];
    for (const item of level) {
      const existing = winners.get(item.key);
      if (existing) {
        existing.items.push(item);
        continue;
      }
      const p = preparedByItem.get(item);
      if (!p) continue;
      // a relocated artifact competes under its new coordinates
      const dependency = { ...item.dependency, ...p.gav };
      const key = conflictKey(dependency);
      const relocatedWinner = key === item.key ? undefined : winners.get(key);
      if (relocatedWinner) {
        relocatedWinner.items.push({ ...item, key });
        continue;
      }
      const node: Node = {
        key,
        gav: p.gav,
        dependency,
        depth: item.depth,
        exclusions: [...(item.parent?.exclusions ?? []), ...item.dependency.exclusions],
        items: [{ ...item, key }],
        scope: "compile",
        optional: false,
        model: p.model,
      };
      winners.set(key, node);
      if (key !== item.key) winners.set(item.key, node);
      order.push(node);
      newWinners.push(node);
    }
    const next: Item[] = [];
    for (const node of newWinners) {
      const model = node.model;
      if (!model || node.depth >= MAX_GRAPH_DEPTH) continue;
      if (node.dependency.scope === "system") continue;
      for (const child of model.dependencies) {
        // DependencySelector chain: declared (pre-management) scope and optional flag, path exclusions
        const scope = child.scope ?? "compile";
        if (scope === "test" || scope === "provided") continue;
        if (child.optional === true) continue;
        if (node.exclusions.some((e) => excludes(e, child.groupId, child.artifactId))) continue;
        const dependency = manage(child);
        next.push({ key: conflictKey(dependency), parent: node, dependency, depth: node.depth + 1 });
      }
    }
    level = next;
  }

  computeScopes(order);
  return order
    .filter((node) => !(node.gav.groupId === self.groupId && node.gav.artifactId === self.artifactId))
    .filter((node) => !options.isWorkspaceArtifact?.(node.gav))
    .map((node) => ({
      groupId: node.gav.groupId,
      artifactId: node.gav.artifactId,
      version: node.gav.version,
      type: node.dependency.type,
      classifier: artifactOf(node.dependency.type, node.dependency.classifier).classifier,
      scope: node.scope,
      optional: node.optional,
      depth: node.depth,
    }));
}

/**
 * Scopes and optionality of the winners (JavaScopeSelector, SimpleOptionalitySelector). A winner's scope
 * depends on its items' parents' scopes, so this widens until nothing changes (scopes only widen).
 */
function computeScopes(nodes: Node[]): void {
  const itemScope = (item: Item) => deriveScope(item.parent?.scope, item.dependency.scope ?? "compile");
  const itemOptional = (item: Item) => (item.parent?.optional ?? false) || item.dependency.optional === true;
  for (const node of nodes) {
    node.scope = itemScope(node.items[0] as Item);
    node.optional = itemOptional(node.items[0] as Item);
  }
  for (let round = 0; round < 50; round++) {
    let changed = false;
    for (const node of nodes) {
      const direct = node.items.find((i) => i.depth <= 1);
      let scope: string;
      let optional: boolean;
      if (direct) {
        scope = direct.dependency.scope ?? "compile";
        optional = direct.dependency.optional === true;
      } else {
        scope =
          node.items[0]?.dependency.scope === "system"
            ? "system"
            : widest(new Set(node.items.map(itemScope)));
        optional = node.items.every(itemOptional);
      }
      if (scope !== node.scope || optional !== node.optional) {
        node.scope = scope;
        node.optional = optional;
        changed = true;
      }
    }
    if (!changed) break;
  }
}

/** A version range becomes the highest published version inside it (maven-resolver's default). */
async function resolveVersion(dependency: Dependency, options: ResolveOptions): Promise<string | undefined> {
  const label = `${dependency.groupId}:${dependency.artifactId}`;
  const version = dependency.version;
  if (version === undefined || version === "" || version.includes("${")) {
    options.warn(`${label}: no version (${version ?? "none declared or managed"}), left out`);
    return undefined;
  }
  if (!isVersionRange(version)) return version;
  const range = parseVersionRange(version);
  if (!range) {
    options.warn(`${label}: unreadable version range ${version}, left out`);
    return undefined;
  }
  const single = range.length === 1 && range[0]?.lower && range[0].lower.version === range[0].upper?.version;
  if (single) return range[0]?.lower?.version;
  const published = await options.repository.versions(dependency.groupId, dependency.artifactId);
  const inRange = published.filter((v) => rangeContains(range, v, compareMavenVersions));
  inRange.sort(compareMavenVersions);
  const chosen = inRange.at(-1);
  if (chosen === undefined) options.warn(`${label}: no published version in ${version}, left out`);
  return chosen;
}

/** The node's POM, following relocations. */
async function locate(
  dependency: Dependency,
  version: string,
  options: ResolveOptions,
): Promise<{ gav: Gav; model: EffectiveModel | undefined }> {
  let gav: Gav = { groupId: dependency.groupId, artifactId: dependency.artifactId, version };
  for (let hops = 0; hops < 5; hops++) {
    const model = await options.builder.buildArtifact(gav);
    if (!model) {
      if (dependency.scope !== "system") {
        options.warn(
          `the POM of ${gavText(gav)} was not found (${options.builder.missingReasons.get(gavText(gav)) ?? "no such POM"}): its own dependencies are missing from the result`,
        );
      }
      return { gav, model: undefined };
    }
    const target = model.relocation;
    if (!target || gavText(target) === gavText(gav)) return { gav, model };
    gav = target;
  }
  return { gav, model: undefined };
}
