#!/usr/bin/env -S node --max-semi-space-size=16
// The entry of `imaging` and `npm start`. Only the Node.js floor check is imported statically: the CLI
// (and node:sqlite with it) loads once the running Node.js is known to be recent enough.
import { unsupportedNodeMessage } from "./node-floor.ts";

const unsupported = unsupportedNodeMessage();
if (unsupported !== undefined) {
  process.stderr.write(`${unsupported}\n`);
  process.exit(1);
}
const { run } = await import("./run.ts");
await run(process.argv.slice(2));
