/**
 * What every fuzz target treats as handled: the parser's documented error, naming the input, on one
 * line (the CLI prints `file[:line]: message`). Anything else escaping a target is a finding.
 */
import { ScanInputError } from "../../../src/scanner/inventory.ts";

/** A finding that is not an exception of the parser itself (a bad error message, a wrong result). */
export class FuzzFinding extends Error {
  override name = "FuzzFinding";
}

/** Rethrows `error` unless it is a ScanInputError about `file` whose message is one readable line. */
export function expectScanInputError(error: unknown, file: string): void {
  if (!(error instanceof ScanInputError)) throw error;
  if (error.file !== file) throw new FuzzFinding(`error names ${error.file}, not ${file}: ${error.message}`);
  expectOneLine(error.message);
}

/** Error messages reach people through a terminal or a log line: no line breaks or control characters. */
export function expectOneLine(message: string): void {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is looked for
  if (/[\u0000-\u001f\u007f]/.test(message)) {
    throw new FuzzFinding(
      `error message is not one printable line: ${JSON.stringify(message.slice(0, 200))}`,
    );
  }
}

export const utf8 = (data: Uint8Array): string => Buffer.from(data).toString("utf8");
