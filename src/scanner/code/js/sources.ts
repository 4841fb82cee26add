/** Which walked files are JavaScript/TypeScript sources of the application, and reading one. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { extractSource } from "./extract-file.ts";
import type { FileFacts } from "./facts.ts";

const SOURCE = /\.(?:[cm]?[jt]s|[jt]sx)$/;
/** Type declarations hold no code; `.min.js` and bundles are built outputs, not the application's source. */
const NOT_SOURCE = /(?:\.d\.[cm]?ts|[.-]min\.js|\.bundle\.js)$/;

export function isJavaScriptSource(relativePath: string): boolean {
  return SOURCE.test(relativePath) && !NOT_SOURCE.test(relativePath);
}

/** Minified code: long lines (a bundler's output), whatever its name. */
function looksMinified(source: string, lines: number): boolean {
  return source.length > 8192 && source.length / Math.max(lines, 1) > 500;
}

/** Reads and extracts one file (`file` relative to `root`); never throws. */
export function extractFile(root: string, file: string): FileFacts {
  let source: string;
  try {
    source = readFileSync(join(root, file), "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return emptyFacts(file, 0, { line: 1, message: `cannot be read (${code})` });
  }
  const lines = source.split("\n", 2).length === 1 ? 1 : countNewlines(source) + 1;
  if (looksMinified(source, lines)) return { ...emptyFacts(file, lines), skipped: "minified" };
  return extractSource(file, source);
}

function countNewlines(source: string): number {
  let n = 0;
  for (let i = source.indexOf("\n"); i >= 0; i = source.indexOf("\n", i + 1)) n++;
  return n;
}

function emptyFacts(file: string, lines: number, error?: FileFacts["error"]): FileFacts {
  return {
    file,
    lines,
    bytes: 0,
    uses: [],
    exports: { named: {}, own: [], stars: [] },
    ...(error ? { error } : {}),
  };
}
