/**
 * pnpm-lock.yaml, lockfile formats 6 (pnpm 8) and 9 (pnpm 9 and later). `importers` give each
 * workspace's direct dependencies, dev ones apart; `packages` (6) or `snapshots` (9) give the graph,
 * keyed `/name@version(peers)` (6) or `name@version(peers)` (9).
 */
import { isObject, lineOf, parseYamlDocument } from "../input-files.ts";
import { type InventoryWarning, ScanInputError } from "../inventory.ts";
import { type LockNode, registryPackagesFromGraph } from "./dependency-graph.ts";
import type { LockfileRead } from "./package-lock.ts";
import { splitDescriptor } from "./yarn-lock.ts";

export function readPnpmLock(text: string, shown: string): LockfileRead {
  const lock = parseYamlDocument(text, shown);
  if (!isObject(lock)) throw new ScanInputError(shown, "is not a pnpm lockfile", 1);
  const format = Number.parseFloat(String(lock.lockfileVersion));
  if (!(format >= 6 && format < 10)) {
    throw new ScanInputError(
      shown,
      `unsupported lockfileVersion ${JSON.stringify(lock.lockfileVersion)} (6 and 9 are read)`,
      lineOf(text, "lockfileVersion") ?? 1,
    );
  }
  const slash = format < 9 ? "/" : "";
  const graph = format >= 9 ? (lock.snapshots ?? lock.packages) : lock.packages;
  if (graph !== undefined && !isObject(graph)) {
    throw new ScanInputError(
      shown,
      `"${format >= 9 ? "snapshots" : "packages"}" is not a map`,
      lineOf(text, "packages:"),
    );
  }
  const nodes = new Map<string, LockNode>();
  for (const [key, entry] of Object.entries(graph ?? {})) {
    const base = key.replace(/\(.*$/, "");
    const [name, version] = splitDescriptor(slash ? base.replace(/^\//, "") : base);
    if (!name || !version)
      throw new ScanInputError(shown, `package key "${key}" is not name@version`, lineOf(text, key));
    nodes.set(key, { name, version, dependencies: [], optionalDependencies: [] });
    if (!isObject(entry) && entry !== null) {
      throw new ScanInputError(shown, `package "${key}" is not a map`, lineOf(text, key));
    }
  }
  // A reference is a version of the named dependency (`1.2.3(peer@1)`), an alias's full key, or a link.
  const resolve = (dep: string, ref: string): string | undefined => {
    if (ref.startsWith("link:") || ref.startsWith("file:")) return undefined;
    if (slash) return ref.startsWith("/") ? ref : `/${dep}@${ref}`;
    const beforePeers = ref.replace(/\(.*$/, "");
    return beforePeers.lastIndexOf("@") > 0 ? ref : `${dep}@${ref}`;
  };
  for (const [key, entry] of Object.entries(graph ?? {})) {
    if (!isObject(entry)) continue;
    const node = nodes.get(key) as LockNode;
    for (const field of ["dependencies", "optionalDependencies"] as const) {
      const deps = entry[field];
      if (!isObject(deps)) continue;
      const edges = field === "dependencies" ? node.dependencies : node.optionalDependencies;
      for (const [dep, ref] of Object.entries(deps)) {
        const id = resolve(dep, String(ref));
        if (id && nodes.has(id)) edges.push(id);
      }
    }
  }
  const importers = isObject(lock.importers) ? lock.importers : { ".": lock };
  const roots = { production: [] as string[], dev: [] as string[], optional: [] as string[] };
  for (const importer of Object.values(importers)) {
    if (!isObject(importer)) continue;
    for (const [field, list] of [
      ["dependencies", roots.production],
      ["optionalDependencies", roots.optional],
      ["devDependencies", roots.dev],
    ] as const) {
      const deps = importer[field];
      if (!isObject(deps)) continue;
      for (const [dep, spec] of Object.entries(deps)) {
        const ref = isObject(spec) ? spec.version : spec;
        const id = typeof ref === "string" ? resolve(dep, ref) : undefined;
        if (id) list.push(id);
      }
    }
  }
  const warnings: InventoryWarning[] = [];
  const packages = registryPackagesFromGraph(nodes, roots, shown, warnings);
  return { packages, warnings };
}
