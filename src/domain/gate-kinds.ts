import { KNOWN_SEVERITIES } from "../contracts/platform.ts";
import type { GateRuleKind } from "../contracts/resources.ts";
import type { StoredGateRule } from "../store/gates.ts";

/**
 * Quality gate rule kinds and their parameters, as pure functions: each kind names its parameters,
 * their defaults and the rule that checks a value, so an update is refused with the key at fault and
 * the type it expects.
 */

type Verdict<T> = { ok: true; value: T } | { ok: false; detail: string };

/** A quality gate rule: the stored one; effectiveRule() gives it its kind's effective parameters. */
export type GateRule = StoredGateRule;

const GATE_SEVERITIES = KNOWN_SEVERITIES;

interface ParameterSpec {
  default: unknown;
  /** What the value must be, for messages: "one of CRITICAL, HIGH, MEDIUM, LOW". */
  expected: string;
  /** The normalized value, or undefined when the value does not qualify. */
  read(raw: unknown): unknown;
  /** The same rule as JSON Schema (the REST API's OpenAPI document). */
  schema: Record<string, unknown>;
}

const severityParameter = (fallback: string): ParameterSpec => ({
  default: fallback,
  expected: `a string, one of ${GATE_SEVERITIES.join(", ")}`,
  read: (raw) =>
    typeof raw === "string" && (GATE_SEVERITIES as readonly string[]).includes(raw.toUpperCase())
      ? raw.toUpperCase()
      : undefined,
  schema: {
    type: "string",
    // Any case, as read() takes it.
    pattern: `^(${GATE_SEVERITIES.map((s) => [...s].map((c) => `[${c}${c.toLowerCase()}]`).join("")).join("|")})$`,
  },
});

const countParameter = (fallback: number, max: number): ParameterSpec => ({
  default: fallback,
  expected: `an integer from 0 to ${max}`,
  read: (raw) =>
    typeof raw === "number" && Number.isInteger(raw) && raw >= 0 && raw <= max ? raw : undefined,
  schema: { type: "integer", minimum: 0, maximum: max },
});

/**
 * Which packages a rule counts: "production" (the default, as Snyk counts them) leaves out the versions a
 * production install leaves out (npm dev, Maven test scope); "all" counts every one.
 */
const packagesParameter: ParameterSpec = {
  default: "production",
  expected: 'one of "production", "all"',
  read: (raw) => (raw === "production" || raw === "all" ? raw : undefined),
  schema: { type: "string", enum: ["production", "all"] },
};

const GATE_KINDS = {
  "no-referenced-severe-cve": { minSeverity: severityParameter("HIGH"), packages: packagesParameter },
  "max-releases-behind-safest": { maxReleases: countParameter(10, 100_000), packages: packagesParameter },
  "no-unfixable-vulnerability": { packages: packagesParameter },
} satisfies Record<GateRuleKind, Record<string, ParameterSpec>>; // every kind the REST contract names, no other

type GateKind = keyof typeof GATE_KINDS;

export function isGateKind(kind: string): kind is GateKind {
  return Object.hasOwn(GATE_KINDS, kind);
}

function specsOf(kind: GateKind): Record<string, ParameterSpec> {
  return GATE_KINDS[kind];
}

const shown = (value: unknown): string => {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string")
    return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value);
  if (typeof value === "object") return "an object";
  return String(value);
};

/** The parameters each kind takes, as JSON Schema: an object with only those, each optional. */
export function gateParametersSchemas(): Record<string, unknown>[] {
  return Object.values(GATE_KINDS).map((specs: Record<string, ParameterSpec>) => ({
    type: "object",
    properties: Object.fromEntries(Object.entries(specs).map(([key, spec]) => [key, spec.schema])),
    additionalProperties: false,
  }));
}

/** Whether `changes` are parameters of some kind: then refusing them for a rule is about its kind. */
export function parametersOfSomeKind(changes: unknown): boolean {
  return Object.keys(GATE_KINDS).some((kind) => mergeGateParameters(kind, {}, changes).ok);
}

/**
 * Merges `changes` into the `current` parameters of a rule of `kind`: every key must be one the kind
 * knows and every value of the type it expects.
 */
export function mergeGateParameters(
  kind: string,
  current: Record<string, unknown>,
  changes: unknown,
): Verdict<Record<string, unknown>> {
  if (!isGateKind(kind)) return { ok: false, detail: `Rules of kind '${kind}' have no parameters to change` };
  if (typeof changes !== "object" || changes === null || Array.isArray(changes)) {
    return { ok: false, detail: `'parameters' must be a JSON object, got ${shown(changes)}` };
  }
  const specs = specsOf(kind);
  const known = Object.keys(specs);
  const merged = effectiveGateParameters(kind, current);
  for (const [key, raw] of Object.entries(changes)) {
    const spec = Object.hasOwn(specs, key) ? specs[key] : undefined;
    if (!spec) {
      return {
        ok: false,
        detail:
          known.length === 0
            ? `Unknown parameter '${key}': rules of kind '${kind}' take no parameters`
            : `Unknown parameter '${key}' for rules of kind '${kind}': expected ${known.map((k) => `'${k}'`).join(", ")}`,
      };
    }
    const value = spec.read(raw);
    if (value === undefined) {
      return { ok: false, detail: `Parameter '${key}' must be ${spec.expected}, got ${shown(raw)}` };
    }
    merged[key] = value;
  }
  return { ok: true, value: merged };
}

/** The kind's defaults overlaid with the stored values that still qualify (keys in name order). */
export function effectiveGateParameters(kind: string, stored: unknown): Record<string, unknown> {
  if (!isGateKind(kind)) return {};
  const specs = specsOf(kind);
  const values = typeof stored === "object" && stored !== null ? (stored as Record<string, unknown>) : {};
  const result: Record<string, unknown> = {};
  for (const key of Object.keys(specs).sort()) {
    const spec = specs[key] as ParameterSpec;
    const value = Object.hasOwn(values, key) ? spec.read(values[key]) : undefined;
    result[key] = value === undefined ? spec.default : value;
  }
  return result;
}

/** The rule with its kind's effective parameters (defaults overlaid with what the store holds). */
export function effectiveRule(rule: StoredGateRule): GateRule {
  return isGateKind(rule.kind)
    ? { ...rule, parameters: effectiveGateParameters(rule.kind, rule.parameters) }
    : rule;
}
