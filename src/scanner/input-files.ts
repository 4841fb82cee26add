/** Reading scanner inputs: any failure becomes a ScanInputError naming the file (and line where known). */
import { readFileSync } from "node:fs";
import { relative, sep } from "node:path";
import { parse as parseYaml, YAMLParseError } from "yaml";
import { ScanInputError } from "./inventory.ts";

/** `file` relative to the scanned root, `/`-separated, as error messages and inventories name it. */
export function displayPath(root: string, file: string): string {
  const rel = relative(root, file);
  return (rel === "" ? file : rel).split(sep).join("/");
}

export function readText(file: string, shown: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ScanInputError(shown, code === "EACCES" ? "permission denied" : `cannot be read (${code})`);
  }
}

/** V8 reports "... (line 4 column 1)"; older messages only give the position. */
export function parseJson(text: string, shown: string): unknown {
  if (text.trim() === "") throw new ScanInputError(shown, "is empty");
  try {
    return JSON.parse(text);
  } catch (error) {
    const message = (error as Error).message;
    const lineColumn = /\(line (\d+) column \d+\)/.exec(message);
    const position = /at position (\d+)/.exec(message);
    const line = lineColumn
      ? Number(lineColumn[1])
      : position
        ? text.slice(0, Number(position[1])).split("\n").length
        : text.split("\n").length;
    const reason = message
      .replace(/ in JSON at position \d+.*$/, "")
      .replace(/\s*\(line \d+ column \d+\)$/, "");
    throw new ScanInputError(shown, `not valid JSON: ${reason}`, line);
  }
}

export function parseYamlDocument(text: string, shown: string): unknown {
  if (text.trim() === "") throw new ScanInputError(shown, "is empty");
  try {
    return parseYaml(text, { uniqueKeys: false });
  } catch (error) {
    if (error instanceof YAMLParseError) {
      throw new ScanInputError(
        shown,
        `not valid YAML: ${(error.message.split("\n")[0] ?? "").replace(/ at line \d+, column \d+:?$/, "")}`,
        error.linePos?.[0].line,
      );
    }
    throw new ScanInputError(shown, `not valid YAML: ${(error as Error).message.split("\n")[0]}`);
  }
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The 1-based line of the first occurrence of `needle` in `text` (for errors about a JSON entry). */
export function lineOf(text: string, needle: string): number | undefined {
  const index = text.indexOf(needle);
  return index < 0 ? undefined : text.slice(0, index).split("\n").length;
}
