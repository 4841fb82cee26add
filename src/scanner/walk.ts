/** One pass over the scanned tree, skipping what is never an input of its own. */
import { type Dirent, readdirSync } from "node:fs";
import { join } from "node:path";
import { ScanInputError } from "./inventory.ts";

/**
 * Installed dependencies (their own lockfiles and manifests describe packages, not the application),
 * version-control data, tool caches and build outputs.
 */
const SKIPPED_FOLDERS: ReadonlySet<string> = new Set([
  "node_modules",
  "bower_components",
  "jspm_packages",
  ".git",
  ".hg",
  ".svn",
  ".yarn",
  ".pnpm-store",
  ".gradle",
  ".idea",
  ".vscode",
  "dist",
  "build",
  "out",
  "target",
  "coverage",
  ".next",
  ".nuxt",
  ".cache",
]);

/**
 * Test fixtures and examples: lockfiles and SBOMs kept there describe other applications. Walked only
 * when asked (`includeSamples`), so that the projects they hold can be listed as skipped (projects.ts).
 */
const SAMPLE_FOLDERS: ReadonlySet<string> = new Set([
  "fixtures",
  "__fixtures__",
  "test-fixtures",
  "__tests__",
  "examples",
]);

/** Whether a relative folder path (`/`-separated) lies in a test-fixture or example folder. */
export function isSampleFolder(folder: string): boolean {
  return folder !== "" && folder.split("/").some((segment) => SAMPLE_FOLDERS.has(segment));
}

/**
 * Relative, `/`-separated paths of the regular files under `root` (symbolic links are not followed);
 * fixture and example folders only with `includeSamples`.
 */
export function walkFiles(
  root: string,
  shownRoot: string,
  options: { includeSamples?: boolean } = {},
): string[] {
  const files: string[] = [];
  const visit = (folder: string, prefix: string) => {
    let entries: Dirent[];
    try {
      entries = readdirSync(folder, { withFileTypes: true });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new ScanInputError(prefix === "" ? shownRoot : prefix.slice(0, -1), `cannot be read (${code})`);
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (entry.isDirectory()) {
        const skipped =
          SKIPPED_FOLDERS.has(entry.name) || (!options.includeSamples && SAMPLE_FOLDERS.has(entry.name));
        if (!skipped) visit(join(folder, entry.name), `${prefix}${entry.name}/`);
      } else if (entry.isFile()) {
        files.push(`${prefix}${entry.name}`);
      }
    }
  };
  visit(root, "");
  return files;
}
