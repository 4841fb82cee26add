/**
 * One lockfile per project, the one its package manager reads: a folder holding several (a
 * package-lock.json beside a stale yarn.lock) is one project installed one way, and reading both would add
 * up two inventories. The choice, per folder: `--lockfile PATH` when it names one of the folder's
 * lockfiles; else the manager `packageManager` names in the folder's package.json (npm: npm-shrinkwrap.json
 * before package-lock.json, as npm reads them); else the first present of npm-shrinkwrap.json,
 * package-lock.json, pnpm-lock.yaml, yarn.lock. Each lockfile left out is named in a warning.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { basename, isAbsolute, join, relative, resolve, sep } from "node:path";
import { type InventoryWarning, ScanInputError } from "../inventory.ts";

/** In the order read when package.json names no package manager. */
export const NPM_LOCKFILES = ["npm-shrinkwrap.json", "package-lock.json", "pnpm-lock.yaml", "yarn.lock"];

const MANAGER_LOCKFILES: Record<string, readonly string[]> = {
  npm: ["npm-shrinkwrap.json", "package-lock.json"],
  pnpm: ["pnpm-lock.yaml"],
  yarn: ["yarn.lock"],
};

const folderOf = (file: string) => (file.includes("/") ? file.slice(0, file.lastIndexOf("/")) : "");
const join2 = (folder: string, name: string) => (folder === "" ? name : `${folder}/${name}`);

/** `packageManager` of the folder's package.json (`yarn@4.1.0+sha512...` → yarn), if it names one. */
function packageManagerOf(root: string, folder: string): string | undefined {
  const file = join(root, folder, "package.json");
  if (!existsSync(file)) return undefined;
  try {
    const json = JSON.parse(readFileSync(file, "utf8")) as { packageManager?: unknown };
    if (typeof json.packageManager !== "string") return undefined;
    return /^([a-z][a-z0-9-]*)@/.exec(json.packageManager.trim())?.[1];
  } catch {
    return undefined; // the npm reader reports an unreadable package.json when it reads it
  }
}

/**
 * `files`: the walk's relative paths under `root`; `chosen`: the lockfile `--lockfile` names (relative to
 * `root`). Returns the files without the lockfiles left out, and a warning for each of those.
 */
export function chooseLockfiles(
  root: string,
  files: readonly string[],
  chosen?: string,
): { files: string[]; warnings: InventoryWarning[] } {
  const byFolder = new Map<string, string[]>();
  for (const file of files) {
    const name = file.slice(file.lastIndexOf("/") + 1);
    if (!NPM_LOCKFILES.includes(name)) continue;
    const folder = folderOf(file);
    byFolder.set(folder, [...(byFolder.get(folder) ?? []), name]);
  }
  const left = new Set<string>();
  const warnings: InventoryWarning[] = [];
  for (const [folder, names] of byFolder) {
    const manager = packageManagerOf(root, folder);
    const managed = manager === undefined ? undefined : MANAGER_LOCKFILES[manager];
    let read: string;
    let because: string;
    const forced = chosen !== undefined && folderOf(chosen) === folder ? basename(chosen) : undefined;
    if (forced !== undefined && names.includes(forced)) {
      read = forced;
      because = "chosen with --lockfile";
    } else if (managed?.some((n) => names.includes(n))) {
      read = managed.find((n) => names.includes(n)) as string;
      because = `package.json's packageManager is ${manager}`;
    } else {
      read = NPM_LOCKFILES.find((n) => names.includes(n)) as string;
      because =
        "no packageManager in package.json: the first present of npm-shrinkwrap.json, package-lock.json, " +
        "pnpm-lock.yaml, yarn.lock is read";
      if (manager !== undefined) {
        warnings.push({
          file: join2(folder, "package.json"),
          message:
            managed === undefined
              ? `packageManager names ${manager}, whose lockfile is not read: ${read} is read instead`
              : `packageManager names ${manager}, but there is no ${managed.join(" or ")} beside it: ${read} is read instead`,
        });
        because = `${manager}'s lockfile is missing`;
      }
    }
    for (const name of names) {
      if (name === read) continue;
      left.add(join2(folder, name));
      warnings.push({
        file: join2(folder, name),
        message: `not read: ${read} is the project's lockfile (${because}); --lockfile chooses another`,
      });
    }
  }
  return { files: files.filter((f) => !left.has(f)), warnings };
}

/**
 * The `--lockfile` path as chooseLockfiles takes it (relative to the scanned directory), or a one-line
 * error: it must be an existing npm, pnpm or yarn lockfile inside the scanned directory.
 */
export function lockfileOption(path: string, scannedDirectory: string): string {
  const absolute = resolve(path);
  if (!NPM_LOCKFILES.includes(basename(absolute))) {
    throw new ScanInputError(path, `--lockfile names no lockfile (one of ${NPM_LOCKFILES.join(", ")})`);
  }
  let isFile = false;
  try {
    isFile = statSync(absolute).isFile();
  } catch {
    isFile = false;
  }
  if (!isFile) throw new ScanInputError(path, "--lockfile: no such file");
  const inside = relative(scannedDirectory, absolute);
  if (inside === "" || inside === ".." || inside.startsWith(`..${sep}`) || isAbsolute(inside)) {
    throw new ScanInputError(path, "--lockfile must be inside the scanned directory");
  }
  return inside.split(sep).join("/");
}
