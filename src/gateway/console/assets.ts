import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The console's built front end (scripts/build-console.ts writes it): hashed asset files under
 * `assets/` and the `index.html` that names them. Both `src/gateway/console/` (tests, type stripping) and
 * `dist/gateway/console/` sit three levels under the package root, so one relative path serves both.
 */
export const CONSOLE_BUILD_DIR = fileURLToPath(new URL("../../../dist/console/", import.meta.url));

/**
 * No inline script or style, nothing from another origin: the bundle is self-contained (works offline).
 * Forms post only to the gateway itself (the identity provider lives under base_url/auth).
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join("; ");

export const CONSOLE_PAGE_HEADERS = {
  "content-security-policy": CONSOLE_CSP,
  "cache-control": "no-cache",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
} as const;

export interface ConsoleBuild {
  dir: string;
  /** Undefined when the console was not built: its pages then say so (the rest of the gateway works). */
  indexHtml: string | undefined;
}

/** Reads the built index.html once. */
export function loadConsoleBuild(dir = CONSOLE_BUILD_DIR): ConsoleBuild {
  const index = join(dir, "index.html");
  return { dir, indexHtml: existsSync(index) ? readFileSync(index, "utf8") : undefined };
}
