/**
 * The application's own package.json files (the root one beside a lockfile and its workspaces'): they
 * tell which dependencies are direct and which are devDependencies where the lockfile does not say.
 * package.json files anywhere else (tests, examples and templates inside packages) are never read.
 */
import { type Dirent, existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { displayPath, isObject, parseJson, readText } from "../input-files.ts";

export interface Manifest {
  /** Folder of the package.json, relative to the lockfile's folder (`""` for the root, `packages/a`...). */
  folder: string;
  /** dependencies, optionalDependencies and peerDependencies: what a production install may bring. */
  production: Record<string, string>;
  /** Each field alone (peer dependencies are installed by npm 7+, pnpm and yarn alike). */
  dependencies: Record<string, string>;
  optional: Record<string, string>;
  peer: Record<string, string>;
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
  return manifestOf(parseJson(readText(file, shown), shown), folder);
}

/** What a parsed package.json declares (anything but an object declares nothing). */
export function manifestOf(json: unknown, folder: string): Manifest {
  if (!isObject(json))
    return { folder, production: {}, dependencies: {}, optional: {}, peer: {}, dev: {}, workspaces: [] };
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
    dependencies: stringMap(json.dependencies),
    optional: stringMap(json.optionalDependencies),
    peer: stringMap(json.peerDependencies),
    dev: stringMap(json.devDependencies),
    workspaces: workspaces.filter((w): w is string => typeof w === "string"),
  };
}

/** The root manifest and those of its workspaces (yarn/npm `workspaces` globs). */
export function readWorkspaceManifests(lockDir: string, root: string): Manifest[] {
  const top = readManifest(lockDir, "", root);
  if (!top) return [];
  const manifests = [top];
  const folders = expandWorkspaces(lockDir, top.workspaces);
  for (const folder of [...folders].sort()) {
    const manifest = readManifest(lockDir, folder, root);
    if (manifest) manifests.push(manifest);
  }
  return manifests;
}

/**
 * Folders matching workspace patterns as npm and yarn write them (`packages/*`, `apps/**`, `tools/cli`,
 * `!packages/legacy`), relative to `root`; never inside node_modules or dot-folders.
 */
export function expandWorkspaces(root: string, patterns: readonly string[]): Set<string> {
  const expand = (pattern: string) => {
    const segments = pattern
      .replace(/^\.\//, "")
      .split("/")
      .filter((s) => s !== "" && s !== ".");
    const found = new Set<string>();
    const subfolders = (folder: string): string[] => {
      let entries: Dirent[];
      try {
        entries = readdirSync(join(root, folder), { withFileTypes: true });
      } catch {
        return [];
      }
      return entries
        .filter((e) => e.isDirectory() && e.name !== "node_modules" && !e.name.startsWith("."))
        .map((e) => e.name);
    };
    const visit = (folder: string, index: number) => {
      const segment = segments[index];
      if (segment === undefined) {
        if (folder !== "") found.add(folder);
        return;
      }
      const child = (name: string) => (folder === "" ? name : `${folder}/${name}`);
      if (segment === "**") {
        visit(folder, index + 1);
        for (const name of subfolders(folder)) visit(child(name), index);
      } else if (/[*?]/.test(segment)) {
        const regex = new RegExp(
          `^${segment
            .replace(/[.+^${}()|[\]\\]/g, "\\$&")
            .replace(/\*/g, "[^/]*")
            .replace(/\?/g, "[^/]")}$`,
        );
        for (const name of subfolders(folder)) if (regex.test(name)) visit(child(name), index + 1);
      } else if (existsSync(join(root, folder, segment))) {
        visit(child(segment), index + 1);
      }
    };
    visit("", 0);
    return found;
  };
  const folders = new Set<string>();
  for (const pattern of patterns.filter((p) => !p.startsWith("!")))
    for (const f of expand(pattern)) folders.add(f);
  for (const pattern of patterns.filter((p) => p.startsWith("!")))
    for (const f of expand(pattern.slice(1))) folders.delete(f);
  return folders;
}
