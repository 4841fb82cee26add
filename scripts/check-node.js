// Runs before `npm start` and `npm test` build anything: on a Node.js older than package.json's
// engines.node (a fresh clone under Node.js 20 has no node_modules, since `npm ci` refused it), one
// sentence saying what to install, instead of "tsc: not found". Plain JavaScript that any Node.js runs;
// the sentence is src/cli/node-floor.ts's (test/integration/node-floor.test.ts keeps both equal).
import { readFileSync } from "node:fs";

const { engines } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
const floor = /^>=\s*(\d+)\.(\d+)/.exec(engines.node);
const [major, minor] = process.versions.node.split(".").map(Number);
if (floor && (major < Number(floor[1]) || (major === Number(floor[1]) && minor < Number(floor[2])))) {
  process.stderr.write(
    `imaging: Node.js ${floor[1]}.${floor[2]} or newer is needed (this is Node.js ${process.versions.node}): ` +
      "install Node.js 24 LTS from https://nodejs.org/en/download (or run `nvm install 24`) and run the command again.\n",
  );
  process.exit(1);
}
