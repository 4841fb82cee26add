/**
 * yarn and pnpm lockfiles do not flag dev dependencies (pnpm 9 does not, yarn never did): walk the
 * lockfile's graph from the application's production dependencies; what is reachable only from its
 * devDependencies is dev.
 */
import semver from "semver";
import type { InventoryPackage, InventoryWarning } from "../inventory.ts";

export interface LockNode {
  name: string;
  version: string;
  /** Ids of the nodes this one depends on (unresolvable references are left out). */
  dependencies: string[];
  /** Ids of the nodes it depends on optionally (`optionalDependencies`). */
  optionalDependencies: string[];
  /** A workspace or local folder of the application: walked through, never listed. */
  own?: boolean;
}

/** The application's own dependencies (of the root and its workspaces), by the field declaring them. */
export interface GraphRoots {
  production: string[];
  dev: string[];
  optional?: string[];
  peer?: string[];
}

/**
 * Every package of the graph with its scope: production when reachable from a production root through
 * required edges; else optional when reachable from production or optional roots through any edge; else
 * peer, then dev, by the roots that reach it. Without roots (a lockfile read without its package.json)
 * nothing can be told apart: every node is listed, not dev, of unknown scope.
 */
function packagesFromGraph(
  nodes: ReadonlyMap<string, LockNode>,
  roots: GraphRoots | undefined,
  source: string,
): InventoryPackage[] {
  if (!roots) {
    return [...nodes.values()]
      .filter((n) => !n.own)
      .map((n) => ({
        ecosystem: "npm",
        name: n.name,
        version: n.version,
        dev: false,
        scope: null,
        direct: false,
        source,
      }));
  }
  const reach = (starts: readonly string[], seen: Set<string>, optionalEdges: boolean) => {
    const stack = starts.filter((id) => nodes.has(id));
    while (stack.length > 0) {
      const id = stack.pop() as string;
      if (seen.has(id)) continue;
      seen.add(id);
      const node = nodes.get(id);
      for (const next of node?.dependencies ?? []) if (!seen.has(next)) stack.push(next);
      if (optionalEdges)
        for (const next of node?.optionalDependencies ?? []) if (!seen.has(next)) stack.push(next);
    }
    return seen;
  };
  const production = reach(roots.production, new Set(), false);
  const optional = reach([...roots.production, ...(roots.optional ?? [])], new Set(production), true);
  const peer = reach(roots.peer ?? [], new Set(optional), true);
  const all = reach(roots.dev, new Set(peer), true);
  const reachable = new Set(all);
  // Entries nothing reaches are still installed: yarn 4 adds dependencies of its own (its builtin
  // packageExtensions, @types/keyv for got...) that the dependents' entries do not list.
  for (const id of nodes.keys()) all.add(id);
  const direct = new Set([
    ...roots.production,
    ...roots.dev,
    ...(roots.optional ?? []),
    ...(roots.peer ?? []),
  ]);
  const found: InventoryPackage[] = [];
  for (const id of all) {
    const node = nodes.get(id) as LockNode;
    if (node.own) continue;
    const scope = production.has(id)
      ? "production"
      : optional.has(id)
        ? "optional"
        : peer.has(id)
          ? "peer"
          : reachable.has(id)
            ? "dev"
            : null;
    found.push({
      ecosystem: "npm",
      name: node.name,
      version: node.version,
      dev: scope === "dev",
      scope,
      direct: direct.has(id),
      source,
    });
  }
  return found;
}

/**
 * packagesFromGraph without the packages whose version is not a registry version (a git or file
 * reference): they have no published facts, so each is skipped with a warning.
 */
export function registryPackagesFromGraph(
  nodes: ReadonlyMap<string, LockNode>,
  roots: GraphRoots | undefined,
  source: string,
  warnings: InventoryWarning[],
): InventoryPackage[] {
  return packagesFromGraph(nodes, roots, source).filter((p) => {
    if (semver.valid(p.version)) return true;
    warnings.push({
      file: source,
      message: `${p.name}: version "${p.version}" is not a registry version, skipped`,
    });
    return false;
  });
}
