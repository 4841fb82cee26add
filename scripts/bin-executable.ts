/**
 * Sets the execute bit on the commands package.json's `bin` names (dist/cli/main.js), run by the build
 * after the compiler: tsc writes new files without it, and only some npm paths (a global install, a
 * link) set it, so `npx imaging` in a clone answered "Permission denied" after a clean build.
 */
import { chmodSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dirname, "..");
const { bin } = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
  bin: Record<string, string>;
};
for (const file of new Set(Object.values(bin))) {
  const path = join(root, file);
  // read, write and execute for the owner; read and execute for the others, as npm installs bins
  chmodSync(path, statSync(path).mode | 0o755);
}
