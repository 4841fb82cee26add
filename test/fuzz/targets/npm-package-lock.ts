/** package-lock.json / npm-shrinkwrap.json (v1, v2, v3) as `imaging scan` reads them. */
import { readPackageLock } from "../../../src/scanner/npm/package-lock.ts";
import { expectScanInputError, utf8 } from "./kit.ts";

const FILE = "web/package-lock.json";

export function fuzz(data: Buffer): void {
  try {
    readPackageLock(utf8(data), FILE, () => new Set(["lodash", "express"]));
  } catch (error) {
    expectScanInputError(error, FILE);
  }
}
