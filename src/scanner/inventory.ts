/**
 * What the scanner's input readers find (npm lockfiles, Maven POMs and archives, SBOMs): the contract
 * between each reader and `imaging scan`, which merges their inventories into one analysis.
 */

import type { PackageScope } from "../contracts/platform.ts";
import { printable } from "../domain/printable-text.ts";
import type { Ecosystem } from "../domain/versions/index.ts";
import type { RegistryFetcher } from "./registry/cached-fetch.ts";

export interface InventoryPackage {
  ecosystem: Ecosystem;
  /** npm name as published; Maven `groupId:artifactId`. */
  name: string;
  version: string;
  /** Needed only to develop or test the application (npm devDependencies, Maven test/provided scope). */
  dev: boolean;
  /** The scope the package manager gives this version (null: the input does not say; see scope.ts). */
  scope: PackageScope | null;
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
    // The reason often quotes the input (a key, a parser's excerpt): kept on one printable line.
    const shown = printable(reason);
    super(`${file}${line === undefined ? "" : `:${line}`}: ${shown}`);
    this.file = file;
    this.reason = shown;
    this.line = line;
  }
}

/** What a reader may use besides the files it reads. */
export interface ReaderContext {
  /** The scanned path (a directory, or the directory of a scanned file). */
  root: string;
  /** Whether the user named one file rather than a directory: then that file is the whole input. */
  singleFile?: boolean;
  /** Registry access through the on-disk cache (see registry/cached-fetch.ts); honours --offline. */
  fetcher: RegistryFetcher;
  offline: boolean;
  npmRegistryUrl: string;
  mavenRepositoryUrl: string;
  /** `~/.m2/repository` unless configured: read before the remote repository. */
  mavenLocalRepository: string;
  /** A SHA-1 search service for jars without Maven metadata (Maven Central's by default); online only. */
  mavenSearchUrl?: string;
  /** Progress for people (stderr); never parsed. */
  progress(message: string): void;
}

/**
 * One kind of input (npm lockfiles, Maven, SBOMs...). `imaging scan` walks the scanned path once, gives
 * each reader the files it claims, and merges what the readers return.
 */
export interface InputReader {
  name: string;
  /** Whether this reader takes the file at `relativePath` (a path inside the scanned tree, `/`-separated). */
  claims(relativePath: string): boolean;
  /** Reads every claimed file (absolute paths); throws ScanInputError for an input it cannot read. */
  read(files: readonly string[], context: ReaderContext): Promise<Inventory>;
}
