/**
 * JavaScript's `\s` (and what String.prototype.trim removes) spelled out, for JSON Schema patterns: Python's
 * `\s` (Schemathesis, other clients) leaves out U+FEFF, so a pattern written with `\s` would accept a name
 * the server, which checks with JavaScript's `\s`, refuses.
 */
export const SPACES = " \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff";
/** SPACES and the control characters among JavaScript's whitespace (tab, line feed, VT, FF, CR). */
export const WHITESPACE = `\\t\\n\\u000b\\f\\r${SPACES}`;
