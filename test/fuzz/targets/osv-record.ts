/**
 * An OSV record file as `imaging advisories import` reads it: one record or an array of them. Malformed
 * records are reported, never thrown: only JSON syntax errors are (the importer reports those).
 */
import { readOsvRecord } from "../../../src/scanner/advisories/osv-record.ts";
import { expectOneLine, utf8 } from "./kit.ts";

export function fuzz(data: Buffer): void {
  let json: unknown;
  try {
    json = JSON.parse(utf8(data));
  } catch (error) {
    if (error instanceof SyntaxError) return;
    throw error;
  }
  for (const element of Array.isArray(json) ? json : [json]) {
    const read = readOsvRecord(element);
    if (read.kind === "malformed") expectOneLine(read.reason);
  }
}
