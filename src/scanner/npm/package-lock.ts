/**
 * package-lock.json and npm-shrinkwrap.json. v2/v3 list every installed package under `packages`, keyed
 * by its `node_modules/...` path (nesting says which copy a file resolves); v1 nests `dependencies`.
 */
import semver from "semver";
import { isObject, lineOf, parseJson } from "../input-files.ts";
import { type InventoryPackage, type InventoryWarning, ScanInputError } from "../inventory.ts";
import { npmLockScope } from "../scope.ts";

export interface LockfileRead {
  packages: InventoryPackage[];
  warnings: InventoryWarning[];
}

const DEPENDENCY_FIELDS = [
  "dependencies",
  "devDependencies",
  "optionalDependencies",
  "peerDependencies",
] as const;

/**
 * `rootDependencies`: names the application's package.json declares, asked for v1 lockfiles only (they
 * do not record them; without it every top-level entry counts as direct).
 */
export function readPackageLock(
  text: string,
  shown: string,
  rootDependencies: () => ReadonlySet<string> | undefined = () => undefined,
): LockfileRead {
  const lock = parseJson(text, shown);
  if (!isObject(lock)) throw new ScanInputError(shown, "is not a package-lock object", 1);
  const version = lock.lockfileVersion;
  if (version === 2 || version === 3) {
    if (!isObject(lock.packages)) {
      throw new ScanInputError(shown, `lockfileVersion ${version} without a "packages" object`, 1);
    }
    return readPackages(lock.packages, text, shown);
  }
  if (version === 1) {
    if (lock.dependencies !== undefined && !isObject(lock.dependencies)) {
      throw new ScanInputError(shown, `"dependencies" is not an object`, lineOf(text, '"dependencies"'));
    }
    return readV1(lock.dependencies ?? {}, text, shown, rootDependencies());
  }
  throw new ScanInputError(
    shown,
    `unsupported lockfileVersion ${JSON.stringify(version)} (1, 2 and 3 are read)`,
    lineOf(text, '"lockfileVersion"') ?? 1,
  );
}

/** The package name at the end of a `node_modules/...` path (scoped names take two segments). */
function nameFromPath(path: string): string | undefined {
  const at = path.lastIndexOf("node_modules/");
  if (at < 0) return undefined;
  return path.slice(at + "node_modules/".length);
}

function readPackages(packages: Record<string, unknown>, text: string, shown: string): LockfileRead {
  const found: InventoryPackage[] = [];
  const warnings: InventoryWarning[] = [];
  // Folders of the application itself: the root ("") and its workspaces (paths outside node_modules).
  const declared = new Map<string, Set<string>>();
  for (const [path, entry] of Object.entries(packages)) {
    if (!isObject(entry))
      throw new ScanInputError(shown, `entry "${path}" is not an object`, lineOf(text, `"${path}"`));
    if (path.includes("node_modules/")) continue;
    const names = new Set<string>();
    for (const field of DEPENDENCY_FIELDS) {
      const deps = entry[field];
      if (isObject(deps)) for (const name of Object.keys(deps)) names.add(name);
    }
    declared.set(path, names);
  }
  for (const [path, entry] of Object.entries(packages) as [string, Record<string, unknown>][]) {
    const installedAs = nameFromPath(path);
    if (installedAs === undefined || entry.link === true) continue; // the application's own folders
    // An alias (`"foo": "npm:bar@1"`) is installed as foo but is the package bar.
    const name = typeof entry.name === "string" ? entry.name : installedAs;
    const version = entry.version;
    if (typeof version !== "string" || version === "") {
      throw new ScanInputError(shown, `"${path}" has no version`, lineOf(text, `"${path}"`));
    }
    if (!semver.valid(version)) {
      warnings.push({
        file: shown,
        line: lineOf(text, `"${path}"`),
        message: `${path}: version "${version}" is not a registry version, skipped`,
      });
      continue;
    }
    const parent = path
      .slice(0, path.length - installedAs.length - "node_modules/".length)
      .replace(/\/$/, "");
    found.push({
      ecosystem: "npm",
      name,
      version,
      dev: entry.dev === true,
      scope: npmLockScope(entry),
      // Workspaces' dependencies are hoisted to the root's node_modules.
      direct:
        (declared.get(parent)?.has(installedAs) ?? false) ||
        (parent === "" && [...declared.values()].some((names) => names.has(installedAs))),
      source: shown,
    });
  }
  return { packages: found, warnings };
}

function readV1(
  dependencies: Record<string, unknown>,
  text: string,
  shown: string,
  rootDependencies: ReadonlySet<string> | undefined,
): LockfileRead {
  const found: InventoryPackage[] = [];
  const warnings: InventoryWarning[] = [];
  const visit = (deps: Record<string, unknown>, trail: string, depth: number) => {
    for (const [installedAs, entry] of Object.entries(deps)) {
      const where = `${trail}${installedAs}`;
      if (!isObject(entry) || typeof entry.version !== "string") {
        throw new ScanInputError(
          shown,
          `dependency "${where}" has no version`,
          lineOf(text, `"${installedAs}"`),
        );
      }
      let name = installedAs;
      let version = entry.version;
      const alias = /^npm:((?:@[^/]+\/)?[^@]+)@(.+)$/.exec(version);
      if (alias) [, name = installedAs, version = ""] = alias;
      if (semver.valid(version)) {
        found.push({
          ecosystem: "npm",
          name,
          version,
          dev: entry.dev === true,
          scope: npmLockScope(entry),
          direct: depth === 0 && (rootDependencies?.has(installedAs) ?? true),
          source: shown,
        });
      } else if (entry.bundled !== true) {
        warnings.push({
          file: shown,
          line: lineOf(text, `"${installedAs}"`),
          message: `${where}: version "${version}" is not a registry version, skipped`,
        });
      }
      if (entry.dependencies !== undefined) {
        if (!isObject(entry.dependencies)) {
          throw new ScanInputError(
            shown,
            `"dependencies" of "${where}" is not an object`,
            lineOf(text, `"${installedAs}"`),
          );
        }
        visit(entry.dependencies, `${where} > `, depth + 1);
      }
    }
  };
  visit(dependencies, "", 0);
  return { packages: found, warnings };
}
