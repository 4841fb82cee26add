/**
 * Issue 32's reproduction, shared by the tests that read it: an application requiring lodash 4.17.4 whose
 * dev tool nests its own lodash 4.17.10, and the OSV record of the lodash.merge advisory (CVE-2018-16487).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const MERGE = fileURLToPath(
  new URL("../fixtures/osv/affected-functions/GHSA-4xc9-xhrj-v574.json", import.meta.url),
);

export function writeRepro(dir: string): void {
  mkdirSync(dir, { recursive: true });
  const root = {
    name: "repro",
    version: "1.0.0",
    dependencies: { lodash: "4.17.4" },
    devDependencies: { "old-tool": "1.0.0" },
  };
  writeFileSync(join(dir, "package.json"), JSON.stringify(root));
  writeFileSync(
    join(dir, "package-lock.json"),
    JSON.stringify({
      name: "repro",
      version: "1.0.0",
      lockfileVersion: 3,
      requires: true,
      packages: {
        "": root,
        "node_modules/lodash": { version: "4.17.4" },
        "node_modules/old-tool": { version: "1.0.0", dev: true, dependencies: { lodash: "4.17.10" } },
        "node_modules/old-tool/node_modules/lodash": { version: "4.17.10", dev: true },
      },
    }),
  );
  writeFileSync(
    join(dir, "index.js"),
    "const _ = require('lodash'); module.exports = (a, b) => _.merge(a, b);\n",
  );
}
