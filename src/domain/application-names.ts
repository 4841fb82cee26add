/**
 * What an application may be named. The name is a path segment of every URL about the application (the
 * REST API, the console's pages): `.` and `..` are dot segments that every URL parser removes, even
 * percent-encoded, and browsers read `\` as `/`, so such names could never be opened; a `/` splits the
 * segment for proxies that decode `%2F`. The specification refuses the back-quote; control characters
 * would reach terminals and pages as they are.
 */
const CONTROL = /\p{Cc}/u;

export const MAX_APPLICATION_NAME = 256;

/**
 * The rule below as a JSON Schema pattern, for the upload's published schema (a schema-valid upload is
 * accepted): no `/`, `\\`, back-quote or control character, something besides whitespace, not `.` nor `..`.
 * Ranges, not `\\p{Cc}`, so that it reads the same without the `u` flag.
 */
import { SPACES, WHITESPACE } from "./text-patterns.ts";

const REFUSED = "/\\\\`\\u0000-\\u001f\\u007f-\\u009f";
export const APPLICATION_NAME_PATTERN = `^[${SPACES}]*(?:[^${REFUSED}]*[^${REFUSED}.${WHITESPACE}][^${REFUSED}]*|\\.{3,}[^${REFUSED}]*|[^${REFUSED}]*\\.{3,})[${SPACES}]*$`;

/** Why `name` cannot name an application, or undefined when it can. */
export function applicationNameProblem(name: string): string | undefined {
  if (name.trim() === "") return "must not be blank";
  if (name.length > MAX_APPLICATION_NAME) return `must be at most ${MAX_APPLICATION_NAME} characters`;
  if (name === "." || name === "..") return `must not be '${name}' (no URL can open it)`;
  if (name.includes("/") || name.includes("\\")) return "must not contain '/' or '\\'";
  if (name.includes("`")) return "must not contain a back-quote";
  if (CONTROL.test(name)) return "must not contain control characters";
  return undefined;
}
