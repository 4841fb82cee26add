/** CycloneDX 1.4–1.6 and SPDX 2.3 JSON documents given to `imaging scan`. */
import { readSbom } from "../../../src/scanner/sbom/reader.ts";
import { expectScanInputError, utf8 } from "./kit.ts";

const FILE = "sbom/app.cdx.json";

export function fuzz(data: Buffer): void {
  try {
    readSbom(utf8(data), FILE);
  } catch (error) {
    expectScanInputError(error, FILE);
  }
}
