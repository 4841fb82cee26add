/**
 * Text from an untrusted input (a lockfile's key, a document's URL, a parser's quote of the input) made
 * safe to put in a one-line message: control characters (C0, DEL, C1: line breaks, terminal escape
 * sequences) are written as escapes, so a message stays one line and cannot drive a terminal.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is replaced
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;
const NAMED: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

export function printable(text: string): string {
  return text.replace(
    CONTROL,
    (c) => NAMED[c] ?? `\\u${(c.codePointAt(0) as number).toString(16).padStart(4, "0")}`,
  );
}
