/**
 * Query and path parameter rules of the REST API as pure functions: raw input in, value or the
 * reason out, so every 400 names exactly what was wrong.
 */
import { SCOPE_FILTERS, SEVERITIES } from "../contracts/platform.ts";

export type Parsed<T> = { ok: true; value: T } | { ok: false; detail: string };

const MAX_LIMIT = 1000;

const ok = <T>(value: T): Parsed<T> => ({ ok: true, value });
const fail = <T>(detail: string): Parsed<T> => ({ ok: false, detail });

function single(name: string, raw: unknown): Parsed<string | undefined> {
  if (raw === undefined) return ok(undefined);
  if (Array.isArray(raw)) return fail(`Query parameter '${name}' is given more than once`);
  return ok(String(raw));
}

export function parseLimit(raw: unknown, options: { required: boolean; fallback?: number }): Parsed<number> {
  const text = single("limit", raw);
  if (!text.ok) return text;
  // Absent takes the default; an empty value is no integer (as the OpenAPI document says).
  if (text.value === undefined || (text.value === "" && options.required)) {
    if (!options.required && options.fallback !== undefined) return ok(options.fallback);
    return fail(
      `Query parameter 'limit' is required: the maximum number of items to return, 1 to ${MAX_LIMIT}`,
    );
  }
  if (!/^\d+$/.test(text.value) || Number(text.value) < 1 || Number(text.value) > MAX_LIMIT) {
    return fail(`Query parameter 'limit' must be an integer from 1 to ${MAX_LIMIT}, got '${text.value}'`);
  }
  return ok(Number(text.value));
}

export function parseSkip(raw: unknown): Parsed<number> {
  const text = single("skip", raw);
  if (!text.ok) return text;
  if (text.value === undefined) return ok(0);
  if (!/^\d+$/.test(text.value) || !Number.isSafeInteger(Number(text.value))) {
    return fail(`Query parameter 'skip' must be a non-negative integer, got '${text.value}'`);
  }
  return ok(Number(text.value));
}

const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?([Zz]|[+-]\d{2}:?\d{2})?$/;

/**
 * An ISO 8601 date-time, e.g. 2024-03-01T12:00:00Z. Without an offset it is read as UTC. Returns the
 * instant in the store's form (toISOString).
 */
export function parseDateTime(raw: unknown, name = "date"): Parsed<string | undefined> {
  const text = single(name, raw);
  if (!text.ok) return text;
  // Absent means the latest; an empty value is no date (the OpenAPI document says so too).
  if (text.value === undefined) return ok(undefined);
  const reason = `Query parameter '${name}' must be an ISO 8601 date-time such as 2024-03-01T00:00:00Z, got '${text.value}'`;
  const match = DATE_TIME.exec(text.value);
  if (!match) return fail(reason);
  const [, y, mo, d, h, mi, s = "0", frac = "0", zone = "Z"] = match as unknown as string[];
  const fields = [y, mo, d, h, mi, s].map(Number) as [number, number, number, number, number, number];
  const [year, month, day, hour, minute, second] = fields;
  const ms = Math.floor(Number(`0.${frac}`) * 1000);
  // Not Date.UTC: it reads years 0-99 as 1900-1999.
  const check = new Date(0);
  check.setUTCFullYear(year, month - 1, day);
  check.setUTCHours(hour, minute, second, ms);
  const utc = check.getTime();
  if (
    check.getUTCFullYear() !== year ||
    check.getUTCMonth() !== month - 1 ||
    check.getUTCDate() !== day ||
    hour > 23 ||
    minute > 59 ||
    second > 59
  ) {
    return fail(reason);
  }
  let offsetMinutes = 0;
  if (zone !== "Z" && zone !== "z") {
    const sign = zone.startsWith("-") ? -1 : 1;
    const digits = zone.slice(1).replace(":", "");
    const oh = Number(digits.slice(0, 2));
    const om = Number(digits.slice(2));
    if (oh > 23 || om > 59) return fail(reason);
    offsetMinutes = sign * (oh * 60 + om);
  }
  return ok(new Date(utc - offsetMinutes * 60_000).toISOString());
}

/** C0 control characters and DEL: PostgreSQL refuses NUL in text, and none belongs in a name. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
const CONTROL = /[\u0000-\u001f\u007f]/;

/** Characters as JSON Schema's minLength/maxLength count them (code points, not UTF-16 units). */
const codePoints = (text: string) => [...text].length;

export function parseApplicationName(raw: unknown): Parsed<string> {
  const name = typeof raw === "string" ? raw : "";
  if (name.trim() === "") return fail("The application name is empty");
  if (name.includes("`")) return fail("The application name must not contain a back-quote (`)");
  if (CONTROL.test(name)) return fail("The application name must not contain control characters");
  if (codePoints(name) > 256) return fail("The application name is longer than 256 characters");
  return ok(name);
}

const CVE = /^CVE-\d{4}-\d{4,}$/i;
const GHSA = /^GHSA(-[23456789cfghjmpqrvwx]{4}){3}$/i;

/** A CVE reference, or a GHSA alias of one. CVE ids are returned upper-case. */
export function parseCveReference(raw: unknown): Parsed<string> {
  const id = typeof raw === "string" ? raw.trim() : "";
  if (CVE.test(id)) return ok(id.toUpperCase());
  if (GHSA.test(id)) return ok(`GHSA${id.slice(4).toLowerCase()}`);
  return fail(`'${id}' is not a CVE reference: expected CVE-YYYY-NNNN (or a GHSA-xxxx-xxxx-xxxx alias)`);
}

export function parseSeverities(raw: unknown, allowed: readonly string[]): Parsed<string[]> {
  const text = single("severity", raw);
  if (!text.ok) return text;
  if (text.value === undefined || text.value === "") return ok([]);
  const values = text.value.split(",").map((v) => v.trim().toUpperCase());
  const bad = values.filter((v) => !allowed.includes(v));
  if (bad.length > 0) {
    return fail(
      `Query parameter 'severity' accepts ${allowed.join(", ")} (comma-separated), got '${bad.join(",")}'`,
    );
  }
  return ok([...new Set(values)]);
}

/** An optional `true` or `false`. */
export function parseBoolean(raw: unknown, name: string): Parsed<boolean | undefined> {
  const text = single(name, raw);
  if (!text.ok) return text;
  if (text.value === undefined) return ok(undefined);
  if (text.value === "true") return ok(true);
  if (text.value === "false") return ok(false);
  return fail(`Query parameter '${name}' must be true or false, got '${text.value}'`);
}

const MAX_SEARCH_LENGTH = 200;

/** Text to search for: 1 to 200 characters, taken literally (no wildcards). */
export function parseSearchText(
  raw: unknown,
  options: { name: string; required: boolean; what: string },
): Parsed<string | undefined> {
  const text = single(options.name, raw);
  if (!text.ok) return text;
  if (text.value === undefined || text.value === "") {
    return options.required
      ? fail(
          `Query parameter '${options.name}' is required: ${options.what}, 1 to ${MAX_SEARCH_LENGTH} characters`,
        )
      : ok(undefined);
  }
  if (codePoints(text.value) > MAX_SEARCH_LENGTH) {
    return fail(
      `Query parameter '${options.name}' must be at most ${MAX_SEARCH_LENGTH} characters, got ${codePoints(text.value)}`,
    );
  }
  if (CONTROL.test(text.value)) return fail(`Query parameter '${options.name}' contains control characters`);
  return ok(text.value);
}

export const ECOSYSTEMS = ["npm", "maven"] as const;

export function parseEcosystem(raw: unknown): Parsed<(typeof ECOSYSTEMS)[number] | undefined> {
  const text = single("ecosystem", raw);
  if (!text.ok) return text;
  if (text.value === undefined) return ok(undefined);
  const value = ECOSYSTEMS.find((e) => e === text.value);
  if (!value) return fail(`Query parameter 'ecosystem' must be npm or maven, got '${text.value}'`);
  return ok(value);
}

/** A package name as the analyses record it: npm name, or Maven groupId:artifactId. Required. */
export function parsePackageName(raw: unknown): Parsed<string> {
  const text = single("package", raw);
  if (!text.ok) return text;
  const value = text.value?.trim() ?? "";
  if (value === "") {
    return fail("Query parameter 'package' is required: an npm package name or a Maven groupId:artifactId");
  }
  if (codePoints(value) > 512) return fail("Query parameter 'package' is longer than 512 characters");
  if (CONTROL.test(value)) return fail("Query parameter 'package' contains control characters");
  return ok(value);
}

/** An optional package version, e.g. 4.17.21 (exact, as the packages list writes it). */
export function parsePackageVersion(raw: unknown): Parsed<string | undefined> {
  const text = single("version", raw);
  if (!text.ok) return text;
  if (text.value === undefined) return ok(undefined);
  const value = text.value.trim();
  if (value === "")
    return fail("Query parameter 'version' is empty: give a version such as 4.17.21, or leave it out");
  if (codePoints(value) > 256) return fail("Query parameter 'version' is longer than 256 characters");
  if (CONTROL.test(value)) return fail("Query parameter 'version' contains control characters");
  return ok(value);
}

/** Package scopes a list keeps: comma-separated, any case; `unknown` for versions whose scope is not known. */
export function parseScopes(raw: unknown): Parsed<string[]> {
  const text = single("scope", raw);
  if (!text.ok) return text;
  if (text.value === undefined || text.value === "") return ok([]);
  const values = text.value.split(",").map((v) => v.trim().toLowerCase());
  const bad = values.filter((v) => !(SCOPE_FILTERS as readonly string[]).includes(v));
  if (bad.length > 0) {
    return fail(
      `Query parameter 'scope' accepts ${SCOPE_FILTERS.join(", ")} (comma-separated), got '${bad.join(",")}'`,
    );
  }
  return ok([...new Set(values)]);
}

/** An optional exact object type identifier, e.g. JS_FUNCTION. */
export function parseTypeId(raw: unknown): Parsed<string | undefined> {
  const text = single("type", raw);
  if (!text.ok) return text;
  if (text.value === undefined || text.value === "") return ok(undefined);
  if (codePoints(text.value) > MAX_SEARCH_LENGTH) {
    return fail(
      `Query parameter 'type' must be at most ${MAX_SEARCH_LENGTH} characters, got ${codePoints(text.value)}`,
    );
  }
  if (CONTROL.test(text.value)) return fail("Query parameter 'type' contains control characters");
  return ok(text.value);
}

/** A quality gate rule id: lower-case letters, digits and dashes, e.g. no-referenced-severe-cve. */
export function parseGateRuleId(raw: unknown): Parsed<string> {
  const id = typeof raw === "string" ? raw : "";
  if (!/^[a-z0-9][a-z0-9-]{0,99}$/.test(id)) {
    return fail(
      `'${id.length > 100 ? `${id.slice(0, 100)}...` : id}' is not a gate rule id: expected lower-case letters, digits and dashes`,
    );
  }
  return ok(id);
}

/**
 * The rules above as JSON Schema, for the route schemas and so the OpenAPI document: each accepts
 * exactly what its parser accepts (`pattern` is an ECMA-262 regular expression, as in OpenAPI 3.1).
 */
const NOT_CONTROL = "\\u0000-\\u001f\\u007f";
const anyCase = (word: string) =>
  [...word].map((c) => (/[a-z]/i.test(c) ? `[${c.toUpperCase()}${c.toLowerCase()}]` : c)).join("");
const SEVERITY_WORD = `\\s*(${SEVERITIES.map(anyCase).join("|")})\\s*`;
const SCOPE_WORD = `\\s*(${SCOPE_FILTERS.map(anyCase).join("|")})\\s*`;

export const paramSchemas = {
  applicationName: {
    type: "string",
    minLength: 1,
    maxLength: 256,
    pattern: `^[^\`${NOT_CONTROL}]*[^\`\\s${NOT_CONTROL}][^\`${NOT_CONTROL}]*$`,
    description: "Application name (URL-encoded): no back-quote, no control character, not blank",
  },
  cveReference: {
    type: "string",
    pattern: `^\\s*(${anyCase("CVE")}-\\d{4}-\\d{4,}|${anyCase("GHSA")}(-[23456789cfghjmpqrvwxCFGHJMPQRVWX]{4}){3})\\s*$`,
    description: "CVE reference, e.g. CVE-2021-44228, or a GHSA alias",
  },
  dateTime: {
    type: "string",
    format: "date-time",
    pattern: `^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])[Tt]([01]\\d|2[0-3]):[0-5]\\d(:[0-5]\\d(\\.\\d{1,9})?)?([Zz]|[+-]([01]\\d|2[0-3]):?[0-5]\\d)?$`,
  },
  severities: {
    type: "string",
    pattern: `^(${SEVERITY_WORD}(,${SEVERITY_WORD})*)?$`,
    description: "Comma-separated severities to keep (CRITICAL, HIGH, MEDIUM, LOW, UNKNOWN; any case)",
  },
  scopes: {
    type: "string",
    pattern: `^(${SCOPE_WORD}(,${SCOPE_WORD})*)?$`,
    description:
      "Comma-separated scopes to keep (production, dev, optional, peer, compile, runtime, provided, test, " +
      "system, unknown; any case)",
  },
  packageVersion: {
    type: "string",
    minLength: 1,
    maxLength: 256,
    pattern: `^\\s*[^\\s${NOT_CONTROL}][^${NOT_CONTROL}]*$`,
    description: "Exact package version, e.g. 4.17.21",
  },
  searchText: { type: "string", minLength: 1, maxLength: MAX_SEARCH_LENGTH, pattern: `^[^${NOT_CONTROL}]*$` },
  /** An optional search: empty is the same as absent. */
  optionalSearchText: { type: "string", maxLength: MAX_SEARCH_LENGTH, pattern: `^[^${NOT_CONTROL}]*$` },
  typeId: { type: "string", maxLength: MAX_SEARCH_LENGTH, pattern: `^[^${NOT_CONTROL}]*$` },
  packageName: {
    type: "string",
    minLength: 1,
    maxLength: 512,
    pattern: `^[^${NOT_CONTROL}]*[^\\s${NOT_CONTROL}][^${NOT_CONTROL}]*$`,
    description: "npm package name, or Maven groupId:artifactId",
  },
  gateRuleId: { type: "string", pattern: "^[a-z0-9][a-z0-9-]{0,99}$" },
  skip: { type: "integer", minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
} as const;

/** The query of the per-analysis histories (analyses with their counts, gate verdicts). */
export const analysisPagingQuery = {
  type: "object",
  properties: {
    limit: {
      type: "integer",
      minimum: 1,
      maximum: MAX_LIMIT,
      default: 100,
      description: "Maximum number of analyses to return",
    },
    skip: { ...paramSchemas.skip, default: 0, description: "Number of analyses to skip first" },
  },
} as const;
