/**
 * The application's own package.json files (the root one beside a lockfile and its workspaces'): they
 * tell which dependencies are direct and which are devDependencies where the lockfile does not say.
 * package.json files anywhere else (tests, examples and templates inside packages) are never read.
 */
import { existsSync, globSync } from "node:fs";
import { join } from "node:path";
import { displayPath, isObject, parseJson, readText } from "../input-files.ts";

export interface Manifest {
  /** Folder of the package.json, relative to the lockfile's folder (`""` for the root, `packages/a`...). */
  folder: string;
  production: Record<string, string>;
  dev: Record<string, string>;
  workspaces: string[];
}

function stringMap(value: unknown): Record<string, string> {
  if (!isObject(value)) return {};
  return Object.fromEntries(
    Object.entries(value).filter((e): e is [string, string] => typeof e[1] === "string"),
  );
}

/** undefined when there is no package.json in `folder`. */
export function readManifest(lockDir: string, folder: string, root: string): Manifest | undefined {
  const file = join(lockDir, folder, "package.json");
  if (!existsSync(file)) return undefined;
  const shown = displayPath(root, file);
  const json = parseJson(readText(file, shown), shown);
  if (!isObject(json)) return { folder, production: {}, dev: {}, workspaces: [] };
  const workspaces = Array.isArray(json.workspaces)
    ? json.workspaces
    : isObject(json.workspaces) && Array.isArray(json.workspaces.packages)
      ? json.workspaces.packages
      : [];
  return {
    folder,
    production: {
      ...stringMap(json.optionalDependencies),
      ...stringMap(json.peerDependencies),
      ...stringMap(json.dependencies),
    },
    dev: stringMap(json.devDependencies),
    workspaces: workspaces.filter((w): w is string => typeof w === "string"),
  };
}

/** The root manifest and those of its workspaces (yarn/npm `workspaces` globs). */
export function readWorkspaceManifests(lockDir: string, root: string): Manifest[] {
  const top = readManifest(lockDir, "", root);
  if (!top) return [];
  const manifests = [top];
  const folders = new Set<string>();
  for (const pattern of top.workspaces) {
    for (const folder of globSync(pattern.replace(/\/+$/, ""), { cwd: lockDir })) {
      if (folder.split(/[\\/]/).includes("node_modules")) continue;
      folders.add(folder.split("\\").join("/"));
    }
  }
  for (const folder of [...folders].sort()) {
    const manifest = readManifest(lockDir, folder, root);
    if (manifest) manifests.push(manifest);
  }
  return manifests;
}
