/**
 * What the scanner's input readers find (npm lockfiles, Maven POMs and archives, SBOMs): the contract
 * between each reader and `imaging scan`, which merges their inventories into one analysis.
 */
import type { Ecosystem } from "./versions/index.ts";

export interface InventoryPackage {
  ecosystem: Ecosystem;
  /** npm name as published; Maven `groupId:artifactId`. */
  name: string;
  version: string;
  /** Needed only to develop or test the application (npm devDependencies, Maven test/provided scope). */
  dev: boolean;
  /** Declared by the application itself rather than brought in by another package. */
  direct: boolean;
  /** The input it was read from, relative to the scanned path (e.g. `web/package-lock.json`). */
  source: string;
}

/** Something the user should know that did not stop the scan (a parent POM not found, say). */
export interface InventoryWarning {
  file: string;
  line?: number;
  message: string;
}

export interface Inventory {
  packages: InventoryPackage[];
  warnings: InventoryWarning[];
}

/**
 * An input the scanner cannot read (malformed lockfile, truncated SBOM...): the scan stops, records
 * nothing, and the CLI prints `file[:line]: message` on one line.
 */
export class ScanInputError extends Error {
  override name = "ScanInputError";
  readonly file: string;
  readonly reason: string;
  readonly line: number | undefined;
  constructor(file: string, reason: string, line?: number) {
    super(`${file}${line === undefined ? "" : `:${line}`}: ${reason}`);
    this.file = file;
    this.reason = reason;
    this.line = line;
  }
}
