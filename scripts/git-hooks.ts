/**
 * Points this clone's git at the repository's hooks (.githooks: the commit subject rule), run by
 * `npm ci`/`npm install` through `prepare`. Outside a git work tree (an installed package) it does nothing.
 */
import { spawnSync } from "node:child_process";

const inWorkTree = spawnSync("git", ["rev-parse", "--is-inside-work-tree"], { encoding: "utf8" });
if (inWorkTree.status === 0 && inWorkTree.stdout.trim() === "true") {
  spawnSync("git", ["config", "core.hooksPath", ".githooks"], { stdio: "inherit" });
}
