/**
 * Query and path parameter rules of the REST API as pure functions: raw input in, value or the
 * reason out, so every 400 names exactly what was wrong.
 */
export type Parsed<T> = { ok: true; value: T } | { ok: false; detail: string };

export const MAX_LIMIT = 1000;

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
  if (text.value === undefined || text.value === "") {
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
  if (text.value === undefined || text.value === "") return ok(0);
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
  if (text.value === undefined || text.value === "") return ok(undefined);
  const reason = `Query parameter '${name}' must be an ISO 8601 date-time such as 2024-03-01T00:00:00Z, got '${text.value}'`;
  const match = DATE_TIME.exec(text.value);
  if (!match) return fail(reason);
  const [, y, mo, d, h, mi, s = "0", frac = "0", zone = "Z"] = match as unknown as string[];
  const fields = [y, mo, d, h, mi, s].map(Number) as [number, number, number, number, number, number];
  const [year, month, day, hour, minute, second] = fields;
  const ms = Math.floor(Number(`0.${frac}`) * 1000);
  const utc = Date.UTC(year, month - 1, day, hour, minute, second, ms);
  const check = new Date(utc);
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

export function parseApplicationName(raw: unknown): Parsed<string> {
  const name = typeof raw === "string" ? raw : "";
  if (name.trim() === "") return fail("The application name is empty");
  if (name.includes("`")) return fail("The application name must not contain a back-quote (`)");
  if (name.length > 256) return fail("The application name is longer than 256 characters");
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
