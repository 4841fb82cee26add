/**
 * One OSV record (GHSA records are OSV) read into what the store keeps: the advisory under its CVE id
 * when it names one (else its own id), its aliases, severity, CVSS base score and the affected spans of
 * its npm and Maven packages. Pure: no I/O.
 */
import cvss from "ae-cvss-calculator";
import { z } from "zod";
import { printable } from "../../domain/printable-text.ts";
import type { AffectedRange, Ecosystem } from "../../domain/versions/index.ts";
import { isAffected } from "../../domain/versions/index.ts";
import { type OsvEvent, spansOfOsvRange } from "../../domain/versions/osv-range.ts";
import type { AdvisoryInput, AdvisoryReference, OsvRecordInput } from "../../store/input-records.ts";

const text = z.string().trim().min(1);
const instant = z.string().refine((s) => !Number.isNaN(Date.parse(s)), "expected an RFC 3339 date-time");

/** The keys an event has, as a message quotes them: a few, each cut short (they are the input's text). */
const gotKeys = (keys: string[]): string =>
  keys.length === 0
    ? "none"
    : keys
        .slice(0, 4)
        .map((k) => JSON.stringify(k.length > 40 ? `${k.slice(0, 40)}…` : k))
        .join(", ") + (keys.length > 4 ? `, and ${keys.length - 4} more` : "");

const eventSchema = z
  .record(z.string(), z.unknown())
  .superRefine((event, ctx) => {
    const keys = Object.keys(event);
    const known = ["introduced", "fixed", "last_affected", "limit"];
    if (keys.length !== 1 || !known.includes(keys[0] as string)) {
      ctx.addIssue({
        code: "custom",
        message: `expected exactly one of introduced, fixed, last_affected, limit (got ${gotKeys(keys)})`,
      });
      return;
    }
    if (typeof event[keys[0] as string] !== "string" || (event[keys[0] as string] as string).trim() === "") {
      ctx.addIssue({ code: "custom", path: [keys[0] as string], message: "expected a non-empty string" });
    }
  })
  .transform((event) => event as OsvEvent);

const rangeSchema = z
  .object({
    type: z.string(),
    events: z.array(eventSchema).min(1),
  })
  .superRefine((range, ctx) => {
    if (range.type === "GIT") return;
    if (!range.events.some((e) => "introduced" in e)) {
      ctx.addIssue({ code: "custom", path: ["events"], message: "a range needs an introduced event" });
    }
    if (range.events.some((e) => "fixed" in e) && range.events.some((e) => "last_affected" in e)) {
      ctx.addIssue({
        code: "custom",
        path: ["events"],
        message: "a range has fixed or last_affected events, not both",
      });
    }
  });

/**
 * Where a database names the vulnerable functions of a package: GHSA writes
 * `ecosystem_specific.affected_functions` (`lodash.template`, `(lodash).defaultsDeep`); a database may
 * put the same list under `database_specific`.
 */
const functionsHolder = z
  .object({ affected_functions: z.array(text).optional() })
  .loose()
  .optional();

const affectedSchema = z.object({
  package: z.object({ ecosystem: text, name: text }).optional(),
  ranges: z.array(rangeSchema).optional(),
  versions: z.array(z.string()).optional(),
  ecosystem_specific: functionsHolder,
  database_specific: functionsHolder,
});

/** The fields of the OSV schema the platform reads; others are ignored. */
const osvRecordSchema = z.object({
  id: text,
  modified: instant,
  published: instant.optional(),
  withdrawn: instant.optional(),
  aliases: z.array(text).optional(),
  summary: z.string().optional(),
  details: z.string().optional(),
  severity: z.array(z.object({ type: z.string(), score: z.string() })).optional(),
  affected: z.array(affectedSchema).optional(),
  // Read leniently: a reference without an http(s) URL is left out, never a reason to refuse the record.
  references: z.array(z.unknown()).optional(),
  database_specific: z
    .object({ severity: z.string().optional(), cvss_score: z.number().min(0).max(10).optional() })
    .loose()
    .optional(),
});

type OsvRecord = z.infer<typeof osvRecordSchema>;

type ReadRecord =
  | { kind: "record"; record: OsvRecordInput }
  /** Valid but about no npm or Maven package (and not withdrawn). */
  | { kind: "other-ecosystem"; id: string }
  | { kind: "malformed"; reason: string };

/** `Maven` (Central) or `Maven:<repository URL>`, and `npm`; every other ecosystem is someone else's. */
function ecosystemOf(osv: string): Ecosystem | null {
  if (osv === "npm") return "npm";
  if (osv === "Maven" || osv.startsWith("Maven:")) return "maven";
  return null;
}

const fieldPath = (path: readonly PropertyKey[]): string =>
  path.reduce<string>(
    (acc, part) =>
      typeof part === "number" ? `${acc}[${part}]` : acc ? `${acc}.${String(part)}` : String(part),
    "",
  );

/** Reads one parsed JSON value as an OSV record; `malformed` names the first bad field. */
export function readOsvRecord(json: unknown): ReadRecord {
  const parsed = osvRecordSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue ? fieldPath(issue.path) : "";
    const reason = `${where || "record"}: ${issue?.message ?? "not an OSV record"}`;
    return { kind: "malformed", reason: printable(reason) };
  }
  const osv = parsed.data;
  const withdrawn = osv.withdrawn !== undefined;
  const affected = affectedOf(osv);
  if (affected.length === 0 && !withdrawn) return { kind: "other-ecosystem", id: osv.id };
  const aliases = [...new Set([osv.id, ...(osv.aliases ?? [])])];
  const cve = [osv.id, ...[...(osv.aliases ?? [])].sort()].find((a) => /^CVE-\d{4}-\d+$/.test(a));
  // A database may state a score it computed where no vector is given (the OSV schema's own example of
  // database_specific); a vector, when present, wins.
  const score = cvssScore(osv.severity ?? []) ?? osv.database_specific?.cvss_score ?? null;
  const advisory: AdvisoryInput = {
    id: cve ?? osv.id,
    aliases: aliases.filter((a) => a !== (cve ?? osv.id)),
    severity: severityLabel(osv.database_specific?.severity, score),
    cvssScore: score,
    summary: (osv.summary ?? "").trim() || firstLine(osv.details ?? ""),
    publishedAt: osv.published ? isoSeconds(osv.published) : null,
    references: referencesOf(osv.references ?? []),
    affected,
  };
  return {
    kind: "record",
    record: { osvId: osv.id, modified: isoSeconds(osv.modified), withdrawn, advisory },
  };
}

/** OSV references with an http(s) URL, at most 50, each type upper-cased (WEB when it has none). */
function referencesOf(list: readonly unknown[]): AdvisoryReference[] {
  const references: AdvisoryReference[] = [];
  for (const item of list) {
    const { type, url } = (item ?? {}) as { type?: unknown; url?: unknown };
    if (typeof url !== "string" || !/^https?:\/\/\S+$/i.test(url) || url.length > 2048) continue;
    references.push({
      type: typeof type === "string" && type ? type.toUpperCase().slice(0, 40) : "WEB",
      url,
    });
    if (references.length === 50) break;
  }
  return references;
}

/** ISO 8601 UTC, without milliseconds when they are zero (as the records write them). */
const isoSeconds = (value: string): string => new Date(value).toISOString().replace(".000Z", "Z");

function firstLine(details: string): string {
  const line = details
    .split("\n")
    .map((l) => l.replace(/^#+\s*/, "").trim())
    .find((l) => l !== "" && !/^summary$/i.test(l));
  return (line ?? "").slice(0, 300);
}

/**
 * The npm and Maven entries, one per package: the spans of every SEMVER/ECOSYSTEM range (GIT ranges name
 * commits, not versions) plus the listed versions no range already covers (the union is the same, and
 * OSV exports list hundreds of versions their ranges also cover).
 */
function affectedOf(osv: OsvRecord): AdvisoryInput["affected"] {
  const byPackage = new Map<
    string,
    { ecosystem: Ecosystem; package: string; ranges: AffectedRange[]; functions?: string[] }
  >();
  for (const entry of osv.affected ?? []) {
    const ecosystem = entry.package ? ecosystemOf(entry.package.ecosystem) : null;
    if (!ecosystem || !entry.package) continue;
    const key = `${ecosystem}:${entry.package.name}`;
    let target = byPackage.get(key);
    if (!target) {
      target = { ecosystem, package: entry.package.name, ranges: [] };
      byPackage.set(key, target);
    }
    const spans: AffectedRange[] = [];
    for (const range of entry.ranges ?? []) {
      if (range.type === "SEMVER" || range.type === "ECOSYSTEM") {
        for (const span of spansOfOsvRange(ecosystem, range.events)) spans.push(span);
      }
    }
    const listed = [...new Set(entry.versions ?? [])].filter((v) => !isAffected(ecosystem, v, spans));
    // One at a time: OSV records list up to hundreds of thousands of versions, too many to spread.
    for (const span of spans) target.ranges.push(span);
    for (const version of listed) target.ranges.push({ version });
    const functions = [
      ...(entry.ecosystem_specific?.affected_functions ?? []),
      ...(entry.database_specific?.affected_functions ?? []),
    ].map((f) => f.trim());
    if (functions.length > 0) target.functions = [...new Set([...(target.functions ?? []), ...functions])];
  }
  return [...byPackage.values()];
}

const SEVERITY_NAMES: Record<string, string> = {
  CRITICAL: "CRITICAL",
  HIGH: "HIGH",
  MODERATE: "MEDIUM",
  MEDIUM: "MEDIUM",
  LOW: "LOW",
};

/**
 * The database's own label first (GitHub's `database_specific.severity`, MODERATE read as MEDIUM), else
 * the CVSS qualitative rating of the score (FIRST: 9.0 critical, 7.0 high, 4.0 medium, 0.1 low).
 */
export function severityLabel(databaseSeverity: string | undefined, score: number | null): string {
  const named = databaseSeverity ? SEVERITY_NAMES[databaseSeverity.trim().toUpperCase()] : undefined;
  if (named) return named;
  if (score === null || score === 0) return "UNKNOWN";
  if (score >= 9) return "CRITICAL";
  if (score >= 7) return "HIGH";
  if (score >= 4) return "MEDIUM";
  return "LOW";
}

const CVSS_PREFERENCE = ["CVSS_V4", "CVSS_V3", "CVSS_V2"];

/** Base score of the newest CVSS version the record gives (v4, else v3.x, else v2), computed by ae-cvss-calculator. */
export function cvssScore(severity: readonly { type: string; score: string }[]): number | null {
  for (const type of CVSS_PREFERENCE) {
    for (const entry of severity.filter((s) => s.type === type)) {
      const score = baseScore(entry.score);
      if (score !== null) return score;
    }
  }
  return null;
}

function baseScore(vector: string): number | null {
  try {
    const parsed = cvss.fromVector(vector.trim());
    const base = parsed?.calculateScores().base;
    return typeof base === "number" && Number.isFinite(base) ? base : null;
  } catch {
    return null;
  }
}
