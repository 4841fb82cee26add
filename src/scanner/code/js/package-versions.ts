/**
 * Which installed copy of a package a source file's `require`/`import` reaches: Node.js looks in
 * `node_modules` of the file's folder, then of each parent folder. package-lock.json v2/v3 (and
 * npm-shrinkwrap.json) key every installed copy by that `node_modules/...` path, so the version a file
 * resolves is read exactly; pnpm-lock.yaml gives each workspace (importer) its own direct versions. For
 * yarn.lock and v1 package-locks the scan's inventory decides (one version, else the direct one).
 *
 * Also says which files belong to the application: a file whose nearest package.json is neither beside
 * a lockfile nor one of its workspaces is a template or an example of something else (published
 * packages carry them), and its imports are not the application's.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import type { InventoryPackage } from "../../inventory.ts";
import { expandWorkspaces } from "../../npm/manifest.ts";

const LOCKFILES = ["npm-shrinkwrap.json", "package-lock.json", "pnpm-lock.yaml", "yarn.lock"];

interface Lockfile {
  /** Folder of the lockfile, relative to the scanned root ("" for the root). */
  folder: string;
  /** package-lock v2/v3: version by `node_modules/...` path (relative to the lockfile's folder). */
  installed?: Map<string, string>;
  /** pnpm: version by importer folder (relative to the lockfile's folder), then package name. */
  importers?: Map<string, Map<string, string>>;
  /** Folders of the application's own packages (the root and its workspaces), relative to `folder`. */
  projects: Set<string>;
}

const parentOf = (folder: string) => (folder.includes("/") ? folder.slice(0, folder.lastIndexOf("/")) : "");
const joinPath = (a: string, b: string) => (a === "" ? b : b === "" ? a : `${a}/${b}`);

export class PackageVersions {
  private readonly lockfiles: Lockfile[] = [];
  private readonly byName = new Map<string, InventoryPackage[]>();
  private readonly manifestFolders = new Set<string>();
  private readonly projectCache = new Map<string, Lockfile | null>();

  /** `files`: the walk's relative paths; `packages`: the scan's inventory. */
  constructor(root: string, files: readonly string[], packages: readonly InventoryPackage[]) {
    for (const p of packages) {
      if (p.ecosystem !== "npm") continue;
      const list = this.byName.get(p.name) ?? [];
      list.push(p);
      this.byName.set(p.name, list);
    }
    const byFolder = new Map<string, Set<string>>();
    for (const file of files) {
      const slash = file.lastIndexOf("/");
      const name = file.slice(slash + 1);
      const folder = slash < 0 ? "" : file.slice(0, slash);
      if (name === "package.json") this.manifestFolders.add(folder);
      if (!LOCKFILES.includes(name)) continue;
      const names = byFolder.get(folder) ?? new Set();
      names.add(name);
      byFolder.set(folder, names);
    }
    for (const [folder, names] of byFolder) {
      const name = LOCKFILES.find((n) => names.has(n)) as string;
      try {
        this.lockfiles.push(readLockfile(root, folder, name));
      } catch {
        // The inventory reader already reported an unreadable lockfile; fall back to the inventory.
        this.lockfiles.push({ folder, projects: new Set([""]) });
      }
    }
    // Deepest lockfile first: a nested project's lockfile wins for its files.
    this.lockfiles.sort((a, b) => b.folder.length - a.folder.length);
  }

  /** The lockfile whose application (root or workspace) the file belongs to, or null. */
  private projectOf(fileFolder: string): Lockfile | null {
    const cached = this.projectCache.get(fileFolder);
    if (cached !== undefined) return cached;
    let manifest: string | undefined;
    for (let folder = fileFolder; ; folder = parentOf(folder)) {
      if (this.manifestFolders.has(folder)) {
        manifest = folder;
        break;
      }
      if (folder === "") break;
    }
    let found: Lockfile | null = null;
    if (manifest !== undefined) {
      for (const lock of this.lockfiles) {
        const inside =
          lock.folder === "" || manifest === lock.folder || manifest.startsWith(`${lock.folder}/`);
        if (!inside) continue;
        const relative = lock.folder === "" ? manifest : manifest.slice(lock.folder.length + 1);
        if (lock.projects.has(relative)) found = lock;
        break;
      }
    }
    this.projectCache.set(fileFolder, found);
    return found;
  }

  /** Whether the file belongs to the application (see the module comment). */
  belongs(file: string): boolean {
    return this.projectOf(parentOf(file)) !== null;
  }

  /** The version of `name` a file at `file` (relative path) resolves, or undefined when none is installed. */
  versionFor(file: string, name: string): string | undefined {
    const folder = parentOf(file);
    const lock = this.projectOf(folder);
    if (!lock) return undefined;
    const inventory = this.byName.get(name);
    if (!inventory) return undefined;
    const relative = lock.folder === "" ? folder : folder.slice(lock.folder.length + 1);
    if (lock.installed) {
      for (let at = relative; ; at = parentOf(at)) {
        const version = lock.installed.get(joinPath(at, `node_modules/${name}`));
        if (version !== undefined) return inventory.some((p) => p.version === version) ? version : undefined;
        if (at === "") break;
      }
      return undefined;
    }
    if (lock.importers) {
      // pnpm links into a workspace's node_modules only what it declares (and the root's, above it).
      for (let at = relative; ; at = parentOf(at)) {
        const version = lock.importers.get(at)?.get(name);
        if (version !== undefined) return inventory.some((p) => p.version === version) ? version : undefined;
        if (at === "") break;
      }
      return undefined;
    }
    if (inventory.length === 1) return inventory[0]?.version;
    return (inventory.find((p) => p.direct) ?? inventory[0])?.version;
  }
}

function readLockfile(root: string, folder: string, name: string): Lockfile {
  const path = join(root, folder, name);
  const projects = new Set<string>([""]);
  if (name === "yarn.lock") {
    const manifest = join(root, folder, "package.json");
    if (existsSync(manifest)) {
      const json = JSON.parse(readFileSync(manifest, "utf8")) as { workspaces?: unknown };
      const patterns = Array.isArray(json.workspaces)
        ? json.workspaces
        : ((json.workspaces as { packages?: unknown } | undefined)?.packages ?? []);
      if (Array.isArray(patterns)) {
        for (const ws of expandWorkspaces(
          join(root, folder),
          patterns.filter((p): p is string => typeof p === "string"),
        ))
          projects.add(ws);
      }
    }
    return { folder, projects };
  }
  if (name === "pnpm-lock.yaml") {
    const lock = parseYaml(readFileSync(path, "utf8"), { maxAliasCount: -1 }) as {
      importers?: Record<string, Record<string, Record<string, unknown>>>;
      dependencies?: Record<string, unknown>;
      devDependencies?: Record<string, unknown>;
      optionalDependencies?: Record<string, unknown>;
    };
    const importers = new Map<string, Map<string, string>>();
    const entries = lock.importers ?? { ".": lock as Record<string, Record<string, unknown>> };
    for (const [importer, entry] of Object.entries(entries)) {
      const at = importer === "." ? "" : importer.replace(/^\.\//, "");
      projects.add(at);
      const versions = new Map<string, string>();
      for (const field of ["dependencies", "devDependencies", "optionalDependencies"]) {
        for (const [dep, spec] of Object.entries(entry?.[field] ?? {})) {
          const raw = typeof spec === "string" ? spec : (spec as { version?: unknown })?.version;
          if (typeof raw !== "string" || raw.startsWith("link:") || raw.startsWith("file:")) continue;
          versions.set(dep, raw.replace(/[(_].*$/, ""));
        }
      }
      importers.set(at, versions);
    }
    return { folder, importers, projects };
  }
  const lock = JSON.parse(readFileSync(path, "utf8")) as {
    lockfileVersion?: number;
    packages?: Record<string, { version?: string; link?: boolean; name?: string }>;
  };
  if ((lock.lockfileVersion === 2 || lock.lockfileVersion === 3) && lock.packages) {
    const installed = new Map<string, string>();
    for (const [key, entry] of Object.entries(lock.packages)) {
      if (!key.includes("node_modules/")) {
        projects.add(key);
        continue;
      }
      if (entry.link || typeof entry.version !== "string") continue;
      installed.set(key, entry.version);
    }
    // Workspaces are linked as node_modules/<name> → their folder, also listed as their own key.
    return { folder, installed, projects };
  }
  // v1: nesting below the top level concerns installed packages only; the inventory decides.
  return { folder, projects };
}
