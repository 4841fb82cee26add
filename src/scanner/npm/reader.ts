/** The npm input reader: package-lock.json, npm-shrinkwrap.json, yarn.lock and pnpm-lock.yaml. */
import { basename, dirname } from "node:path";
import { displayPath, readText } from "../input-files.ts";
import type { InputReader, Inventory } from "../inventory.ts";
import { readManifest, readWorkspaceManifests } from "./manifest.ts";
import { readPackageLock } from "./package-lock.ts";
import { readPnpmLock } from "./pnpm-lock.ts";
import { readYarnLock } from "./yarn-lock.ts";

const LOCKFILES = new Set(["package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml"]);

export const npmReader: InputReader = {
  name: "npm",
  claims: (relativePath) => LOCKFILES.has(relativePath.slice(relativePath.lastIndexOf("/") + 1)),
  async read(files, context) {
    const inventory: Inventory = { packages: [], warnings: [] };
    const folders = new Map<string, Set<string>>();
    for (const file of files) {
      const names = folders.get(dirname(file)) ?? new Set();
      names.add(basename(file));
      folders.set(dirname(file), names);
    }
    for (const [folder, names] of folders) {
      // One lockfile per folder reaches here (scan.ts, npm/lockfile-choice.ts); a reader given two anyway
      // keeps npm's own rule: npm-shrinkwrap.json wins over package-lock.json.
      if (names.has("npm-shrinkwrap.json")) names.delete("package-lock.json");
      for (const name of [...names].sort()) {
        const file = `${folder}/${name}`;
        const shown = displayPath(context.root, file);
        context.progress(`reading ${shown}`);
        const text = readText(file, shown);
        const read =
          name === "yarn.lock"
            ? readYarnLock(text, shown, readWorkspaceManifests(folder, context.root))
            : name === "pnpm-lock.yaml"
              ? readPnpmLock(text, shown)
              : readPackageLock(text, shown, () => rootDependencyNames(folder, context.root));
        // One at a time: spreading a 150,000-entry lockfile into push() overflows the stack.
        for (const p of read.packages) inventory.packages.push(p);
        for (const w of read.warnings) inventory.warnings.push(w);
      }
    }
    return inventory;
  },
};

function rootDependencyNames(folder: string, root: string): Set<string> | undefined {
  const manifest = readManifest(folder, "", root);
  return manifest && new Set([...Object.keys(manifest.production), ...Object.keys(manifest.dev)]);
}
