/** yarn.lock, classic (v1) and Berry (yarn 2+), with the application's package.json beside it. */
import type { Manifest } from "../../../src/scanner/npm/manifest.ts";
import { readYarnLock } from "../../../src/scanner/npm/yarn-lock.ts";
import { expectScanInputError, utf8 } from "./kit.ts";

const FILE = "yarn.lock";
const MANIFESTS: Manifest[] = [
  {
    folder: "",
    production: { lodash: "^4.17.15", express: "^4.17.1", "@google-cloud/storage": "^4.1.0" },
    dependencies: { lodash: "^4.17.15", express: "^4.17.1", "@google-cloud/storage": "^4.1.0" },
    optional: {},
    peer: {},
    dev: { mocha: "^7.1.0", typescript: "^3.9.0" },
    workspaces: ["packages/*"],
  },
  {
    folder: "packages/a",
    production: { "left-pad": "1.3.0" },
    dependencies: { "left-pad": "1.3.0" },
    optional: {},
    peer: {},
    dev: {},
    workspaces: [],
  },
];

export function fuzz(data: Buffer): void {
  try {
    readYarnLock(utf8(data), FILE, MANIFESTS);
  } catch (error) {
    expectScanInputError(error, FILE);
  }
}
