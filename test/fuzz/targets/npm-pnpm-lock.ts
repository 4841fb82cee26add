/** pnpm-lock.yaml, lockfile formats 6 and 9. */
import { readPnpmLock } from "../../../src/scanner/npm/pnpm-lock.ts";
import { expectScanInputError, utf8 } from "./kit.ts";

const FILE = "apps/web/pnpm-lock.yaml";

export function fuzz(data: Buffer): void {
  try {
    readPnpmLock(utf8(data), FILE);
  } catch (error) {
    expectScanInputError(error, FILE);
  }
}
