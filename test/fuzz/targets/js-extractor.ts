/**
 * A JavaScript or TypeScript source file of the scanned application (oxc-parser, then the extractor's
 * walk): extractSource never throws; a file that does not parse yields an error entry. The first byte
 * picks the file's extension (hence its grammar), the rest is the source.
 */
import { extractSource } from "../../../src/scanner/code/js/extract-file.ts";
import { expectOneLine, FuzzFinding, utf8 } from "./kit.ts";

const NAMES = ["src/app.js", "src/app.mjs", "src/app.cjs", "src/app.ts", "src/app.tsx", "src/app.jsx"];

export function fuzz(data: Buffer): void {
  const file = NAMES[(data[0] ?? 0) % NAMES.length] as string;
  const facts = extractSource(file, utf8(data.subarray(1)));
  if (facts.file !== file) throw new FuzzFinding(`facts of ${facts.file} for ${file}`);
  if (facts.error && !(facts.error.line >= 1)) throw new FuzzFinding(`error line ${facts.error.line}`);
  if (facts.error) expectOneLine(facts.error.message);
}
