/**
 * The oldest Node.js this project runs on (package.json "engines"; a unit test keeps both equal): the
 * first with node:sqlite unflagged. Checked before anything else loads, so an older Node.js gets one
 * sentence instead of ERR_UNKNOWN_BUILTIN_MODULE and a stack trace. No imports: this module must load
 * on any Node.js.
 */
export const NODE_FLOOR = "22.13.0";

function atLeast(version: string, floor: string): boolean {
  const have = version.split(".").map(Number);
  const need = floor.split(".").map(Number);
  for (let i = 0; i < need.length; i++) {
    if ((have[i] ?? 0) !== (need[i] ?? 0)) return (have[i] ?? 0) > (need[i] ?? 0);
  }
  return true;
}

/** The sentence for a Node.js older than the floor, or undefined when this one is recent enough. */
export function unsupportedNodeMessage(version: string = process.versions.node): string | undefined {
  if (atLeast(version, NODE_FLOOR)) return undefined;
  const [major, minor] = NODE_FLOOR.split(".");
  return `imaging: Node.js ${major}.${minor} or newer is needed (this is Node.js ${version}): install Node.js 24 LTS from https://nodejs.org/en/download (or run \`nvm install 24\`) and run the command again.`;
}
