import { gateParametersSchemas } from "../store/gate-kinds.ts";
/** JSON schemas of quality gates and analysis comparison (properties in name order). */
import { dateTime } from "./schemas.ts";

export const gateRuleSchema = {
  $id: "GateRule",
  type: "object",
  description: "A quality gate rule. Only enabled rules take part in evaluations.",
  properties: {
    description: { type: "string" },
    enabled: { type: "boolean" },
    id: { type: "string", examples: ["no-referenced-severe-cve"] },
    kind: {
      type: "string",
      enum: ["max-releases-behind-safest", "no-referenced-severe-cve", "no-unfixable-vulnerability"],
    },
    name: { type: "string" },
    parameters: {
      type: "object",
      additionalProperties: true,
      description:
        "no-referenced-severe-cve: {minSeverity: CRITICAL|HIGH|MEDIUM|LOW}; max-releases-behind-safest: " +
        "{maxReleases: integer >= 0}; no-unfixable-vulnerability: {}",
    },
  },
  required: ["description", "enabled", "id", "kind", "name", "parameters"],
} as const;

export const gateRuleUpdateSchema = {
  type: "object",
  description: "Set `enabled`, `parameters` (merged into the current ones, checked per kind) or both.",
  properties: {
    enabled: { type: "boolean" },
    parameters: {
      description: "The parameters of one rule kind; those of another kind than the rule's are refused (409)",
      anyOf: gateParametersSchemas(),
    },
  },
  additionalProperties: false,
  minProperties: 1,
} as const;

/**
 * No `required` list: the serializer writes required properties first, and findings keep name order.
 * `detail`, `package` and `version` are always present; `cve`, `objects` and `severity` as the rule says.
 */
export const gateFindingSchema = {
  $id: "GateFinding",
  type: "object",
  description:
    "A reason a rule fails. detail, package and version are always present; CVE rules add cve, severity " +
    "and objects; no-unfixable-vulnerability adds severity (the worst of the package's CVEs).",
  properties: {
    cve: { type: "string", description: "The CVE at fault (CVE rules)" },
    detail: { type: "string", description: "One sentence saying what fails" },
    objects: {
      type: "array",
      maxItems: 20,
      items: { $ref: "ExternalObject#" },
      description: "Up to 20 external objects of the package the application refers to (CVE rules)",
    },
    package: { type: "string", description: "Package name" },
    severity: { type: "string", description: "Severity of the CVE, or the worst of the package's" },
    version: { type: "string", description: "Package version in use" },
  },
} as const;

export const gateEvaluationSchema = {
  $id: "GateEvaluation",
  type: "object",
  properties: {
    analysis: dateTime,
    application: { type: "string" },
    rules: {
      type: "array",
      description: "The enabled rules, ordered by id",
      items: {
        type: "object",
        properties: {
          findings: {
            type: "array",
            items: { $ref: "GateFinding#" },
            description: "A page (skip, limit) of the rule's findings, in package order",
          },
          findingsTotal: { type: "integer", minimum: 0, description: "Number of findings of the rule" },
          id: { type: "string" },
          name: { type: "string" },
          passed: { type: "boolean" },
        },
        required: ["findings", "findingsTotal", "id", "name", "passed"],
      },
    },
    verdict: { type: "string", enum: ["pass", "fail"] },
  },
  required: ["analysis", "application", "rules", "verdict"],
} as const;

export const gateHistoryEntrySchema = {
  $id: "GateHistoryEntry",
  type: "object",
  properties: {
    analysis: dateTime,
    failedRules: { type: "array", items: { type: "string" }, description: "Ids of the failed rules" },
    verdict: { type: "string", enum: ["pass", "fail"] },
  },
  required: ["analysis", "failedRules", "verdict"],
} as const;

const changes = (items: object) => ({
  type: "object",
  properties: {
    added: { type: "array", items, description: "A page (skip, limit) of the items in `to` only" },
    addedTotal: { type: "integer", minimum: 0, description: "Number of items in `to` only" },
    removed: { type: "array", items, description: "A page (skip, limit) of the items in `from` only" },
    removedTotal: { type: "integer", minimum: 0, description: "Number of items in `from` only" },
  },
  required: ["added", "addedTotal", "removed", "removedTotal"],
});

const packageVersion = {
  type: "object",
  properties: { name: { type: "string" }, version: { type: "string" } },
  required: ["name", "version"],
} as const;

export const comparisonSchema = {
  $id: "Comparison",
  type: "object",
  description: "What changed between two analyses: added = in `to` only, removed = in `from` only.",
  properties: {
    from: dateTime,
    packages: changes(packageVersion),
    references: changes({
      type: "object",
      properties: {
        source: {
          type: "object",
          properties: { fullName: { type: "string" }, id: { type: "string" } },
          required: ["fullName", "id"],
        },
        target: {
          type: "object",
          properties: { fullName: { type: "string" }, id: { type: "string" }, package: { type: "string" } },
          required: ["fullName", "id", "package"],
        },
      },
      required: ["source", "target"],
    }),
    to: dateTime,
    vulnerablePackages: changes({
      type: "object",
      properties: {
        name: { type: "string" },
        version: { type: "string" },
        vulnerabilities: { type: "array", items: { type: "string" } },
      },
      required: ["name", "version", "vulnerabilities"],
    }),
  },
  required: ["from", "packages", "references", "to", "vulnerablePackages"],
} as const;
