/**
 * The REST resources, declared once. The REST API's JSON Schemas (Fastify serialization and OpenAPI,
 * `./json-schema.ts`), the MCP REST client's types (`z.infer`), the MCP tools' output schemas and the
 * console's types all derive from these shapes, so a field added here reaches every one of them.
 *
 * Properties are kept in name order (`byName`): responses are serialized in schema order, and the API
 * family orders JSON properties by name.
 */
import * as z from "zod";
import { PACKAGE_SCOPES, RELEASE_DATE_SOURCES, SCOPE_UNKNOWN, SEVERITIES } from "./platform.ts";

/** The same shape with its keys in name order (so a field added anywhere lands in its place). */
function byName<T extends z.ZodRawShape>(shape: T): T {
  return Object.fromEntries(Object.entries(shape).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) as T;
}

const object = <T extends z.ZodRawShape>(shape: T) => z.object(byName(shape));
const integer = () => z.number().int();

export const dateTime = object({
  dateTime: z.string().meta({ format: "date-time", examples: ["2024-04-22T08:41:34Z"] }),
});
export type DateTime = z.infer<typeof dateTime>;

export const ecosystem = z.enum(["npm", "maven"]);
export const severity = z.enum(SEVERITIES);
export type Severity = z.infer<typeof severity>;

/** A release date and where it comes from (docs/scanner.md, "Release dates"). */
export const releaseDate = object({
  ...dateTime.shape,
  source: z
    .enum(RELEASE_DATE_SOURCES)
    .nullable()
    .describe(
      "Where the date comes from: registry (the npm registry's publication time), last-modified (the Maven " +
        "repository's Last-Modified), signature (when the release's OpenPGP signature was made), " +
        "release-notes (a day from the project's release notes); null when the store did not record it",
    ),
});
export type ReleaseDate = z.infer<typeof releaseDate>;

export const scope = z
  .enum([...PACKAGE_SCOPES, SCOPE_UNKNOWN])
  .describe(
    "The version's scope in the application: npm production, dev, optional, peer; Maven compile, runtime, " +
      "provided, test, system; unknown when the analysis did not say",
  );
export type Scope = z.infer<typeof scope>;

/** The facts of a package version in use, shared by every resource that lists packages. */
export const packageFacts = {
  releaseDate: releaseDate.nullable().describe("Release date of the version in use (null if unknown)"),
  releasesPerYear: integer()
    .nullable()
    .describe("Average number of releases per year over the package's published history"),
  saferClosestVersion: z
    .string()
    .nullable()
    .describe("Smallest upgrade affected by no known vulnerability (null when none exists)"),
  safestVersion: z
    .string()
    .nullable()
    .describe("Newest release affected by no known vulnerability (null when none exists)"),
  scope,
  version: z.string().describe("Package version in use"),
};

const externalObjectFields = {
  fullName: z.string().describe("Long name locating the object in the software architecture"),
  id: z.string().describe("External object ID"),
  mangling: z.string().describe("External function signature, or an empty string"),
  name: z.string(),
  type: z.string().describe("Object type, for display"),
  typeId: z.string().describe("Type identifier, the type reference key"),
};

export const externalObject = object(externalObjectFields).describe(
  "An external object of a package that the application refers to.",
);
export type ExternalObject = z.infer<typeof externalObject>;

export const applicationObject = object({
  fullName: z.string(),
  id: z.string().describe("Application object ID"),
  name: z.string(),
  type: z.string().describe("Object type, for display"),
  typeId: z.string().describe("Type identifier"),
}).describe("An object of the application itself.");
export type ApplicationObject = z.infer<typeof applicationObject>;

export const cvePackage = object({
  name: z.string().describe("Package name; Maven packages as groupId:artifactId"),
  objects: z.array(externalObject),
  ...packageFacts,
}).describe("A package of the application affected by the CVE, with its referred external objects.");
export type CvePackage = z.infer<typeof cvePackage>;

export const applicationSummary = object({
  analysisCount: integer(),
  demo: z.boolean().describe("True for the demo applications shipped with the platform"),
  description: z.string(),
  latestAnalysis: dateTime.nullable(),
  name: z.string(),
});
export type ApplicationSummary = z.infer<typeof applicationSummary>;

export const applicationCounts = object({
  externalObjects: integer(),
  packages: integer(),
  references: integer(),
  vulnerabilities: integer(),
  vulnerablePackages: integer(),
});
export type ApplicationCounts = z.infer<typeof applicationCounts>;

export const applicationDetail = object({
  analyses: z.array(dateTime).describe("Analysis history, oldest first"),
  counts: applicationCounts.describe("Counts in the latest analysis"),
  demo: z.boolean(),
  description: z.string(),
  latestAnalysis: dateTime.nullable(),
  name: z.string(),
});
export type ApplicationDetail = z.infer<typeof applicationDetail>;

export const analysisHistoryEntry = object({
  analysis: dateTime,
  counts: applicationCounts,
  vulnerablePackagesBySeverity: object({
    CRITICAL: integer(),
    HIGH: integer(),
    LOW: integer(),
    MEDIUM: integer(),
    UNKNOWN: integer(),
  }).describe(
    "Vulnerable package versions counted once each, under the most severe CVE affecting them (the five " +
      "counts add up to counts.vulnerablePackages)",
  ),
}).describe("An analysis with its counts and its vulnerable packages by severity.");
export type AnalysisHistoryEntry = z.infer<typeof analysisHistoryEntry>;

export const cveInsight = object({
  affectedPackageCount: integer(),
  aliases: z.array(z.string()),
  id: z.string().describe("CVE reference"),
  referringObjectCount: integer().describe(
    "External objects of the affected packages that the application refers to",
  ),
  score: z.number().nullable().describe("CVSS base score where known"),
  severity,
  summary: z.string(),
});
export type CveInsight = z.infer<typeof cveInsight>;

export const packageUse = object({
  ecosystem,
  factsPending: z
    .boolean()
    .describe(
      "True while the platform is still looking up the package's published versions and release dates in its " +
        "registry (after an upload that named it first): releaseDate, releasesPerYear and the safer versions follow",
    ),
  maxSeverity: z
    .string()
    .nullable()
    .describe("Most severe severity among the CVEs affecting this version (null when none does)"),
  name: z.string().describe("Package name; Maven packages as groupId:artifactId"),
  ...packageFacts,
  sources: z
    .array(z.string())
    .describe(
      "The manifests or lockfiles this version was read from (package-lock.json, pom.xml, gradle.lockfile, an " +
        "archive, an SBOM), relative to the scanned folder; empty when the analysis document did not say",
    ),
  vulnerabilities: z.array(z.string()).describe("CVE ids affecting this version, sorted"),
}).describe("A package version the application uses, with its facts and the CVEs affecting it.");
export type PackageUse = z.infer<typeof packageUse>;

const objectVersion = z
  .string()
  .describe("The version of the package the external object belongs to: the one the referring code loads");

export const interaction = object({
  source: applicationObject,
  target: externalObject,
  version: objectVersion,
}).describe(
  "An application object (source) referring to an external object (target) of a version of the package.",
);
export type Interaction = z.infer<typeof interaction>;

export const externalObjectMatch = object({
  ...externalObjectFields,
  package: z.string().describe("Name of the package the object belongs to"),
  version: objectVersion,
}).describe("An external object the application refers to, with the name and version of its package.");
export type ExternalObjectMatch = z.infer<typeof externalObjectMatch>;

// Shipped with reachesAffectedFunction before reachedFunctions: kept, so answers keep their byte order.
export const cveReference = z
  .object({
    affectedFunctions: z
      .array(z.string())
      .describe(
        "Functions the advisory names as vulnerable in the target's package, as the advisory writes them " +
          "(OSV affected_functions); empty when it names none",
      ),
    ecosystem,
    package: z.string().describe("Package of the target; Maven packages as groupId:artifactId"),
    reachesAffectedFunction: z
      .boolean()
      .nullable()
      .describe(
        "true: the target is an affected function; false: it is not, though the advisory names some; " +
          "null: the advisory names no function of the package",
      ),
    reachedFunctions: z
      .array(z.string())
      .describe("The affected functions the target is (empty unless reachesAffectedFunction is true)"),
    source: applicationObject,
    target: externalObject,
    version: objectVersion,
  })
  .describe(
    "A reference from an application object (source) to an external object (target) of a package version the " +
      "CVE affects, marked by whether the target is one of the functions the advisory names as vulnerable.",
  );
export type CveReference = z.infer<typeof cveReference>;

export const GATE_RULE_KINDS = [
  "max-releases-behind-safest",
  "no-referenced-severe-cve",
  "no-unfixable-vulnerability",
] as const;
export type GateRuleKind = (typeof GATE_RULE_KINDS)[number];

export const gateRule = object({
  description: z.string(),
  enabled: z.boolean(),
  id: z.string().meta({ examples: ["no-referenced-severe-cve"] }),
  kind: z.enum(GATE_RULE_KINDS),
  name: z.string(),
  parameters: z
    .record(z.string(), z.unknown())
    .describe(
      "no-referenced-severe-cve: {minSeverity: CRITICAL|HIGH|MEDIUM|LOW}; max-releases-behind-safest: " +
        "{maxReleases: integer >= 0}; every kind: {packages: production|all}, production (the default) " +
        "leaving out npm dev and Maven test scopes",
    ),
}).describe("A quality gate rule. Only enabled rules take part in evaluations.");
export type GateRule = z.infer<typeof gateRule>;

/**
 * `detail`, `package` and `version` are always present; `cve`, `objects` and `severity` as the rule says.
 * Its JSON Schema lists no `required` (json-schema.ts): the serializer writes required properties first,
 * and findings keep name order.
 */
export const gateFinding = object({
  cve: z.string().optional().describe("The CVE at fault (CVE rules)"),
  detail: z.string().describe("One sentence saying what fails"),
  objects: z
    .array(externalObject)
    .max(20)
    .optional()
    .describe("Up to 20 external objects of the package the application refers to (CVE rules)"),
  package: z.string().describe("Package name"),
  severity: z.string().optional().describe("Severity of the CVE, or the worst of the package's"),
  version: z.string().describe("Package version in use"),
}).describe(
  "A reason a rule fails. detail, package and version are always present; CVE rules add cve, severity " +
    "and objects; no-unfixable-vulnerability adds severity (the worst of the package's CVEs).",
);
export type GateFinding = z.infer<typeof gateFinding>;

export const verdict = z.enum(["pass", "fail"]);

export const gateRuleResult = object({
  findings: z.array(gateFinding).describe("A page (skip, limit) of the rule's findings, in package order"),
  findingsTotal: integer().min(0).describe("Number of findings of the rule"),
  id: z.string(),
  name: z.string(),
  passed: z.boolean(),
});
export type GateRuleResult = z.infer<typeof gateRuleResult>;

export const gateEvaluation = object({
  analysis: dateTime,
  application: z.string(),
  rules: z.array(gateRuleResult).describe("The enabled rules, ordered by id"),
  verdict,
});
export type GateEvaluation = z.infer<typeof gateEvaluation>;

export const gateHistoryEntry = object({
  analysis: dateTime,
  failedRules: z.array(z.string()).describe("Ids of the failed rules"),
  verdict,
});
export type GateHistoryEntry = z.infer<typeof gateHistoryEntry>;

/** One page of each list (the query's skip and limit) and the length of each whole list. */
export const changes = <T extends z.ZodType>(items: T) =>
  object({
    added: z.array(items).describe("A page (skip, limit) of the items in `to` only"),
    addedTotal: integer().min(0).describe("Number of items in `to` only"),
    removed: z.array(items).describe("A page (skip, limit) of the items in `from` only"),
    removedTotal: integer().min(0).describe("Number of items in `from` only"),
  });

export const packageVersion = object({ name: z.string(), version: z.string() });
export type PackageVersion = z.infer<typeof packageVersion>;

export const referenceChange = object({
  source: object({ fullName: z.string(), id: z.string() }),
  target: object({
    fullName: z.string(),
    id: z.string(),
    package: z.string(),
    version: z.string().describe("The version of the package the target belongs to"),
  }),
});
export type ReferenceChange = z.infer<typeof referenceChange>;

export const vulnerablePackageChange = object({
  ...packageVersion.shape,
  vulnerabilities: z.array(z.string()),
});
export type VulnerablePackageChange = z.infer<typeof vulnerablePackageChange>;

export const comparison = object({
  from: dateTime,
  packages: changes(packageVersion),
  references: changes(referenceChange),
  to: dateTime,
  vulnerablePackages: changes(vulnerablePackageChange),
}).describe("What changed between two analyses: added = in `to` only, removed = in `from` only.");
export type Comparison = z.infer<typeof comparison>;

export const advisoryRange = object({
  fixed: z.string().nullable().describe("First version no longer affected (OSV fixed)"),
  introduced: z.string().nullable().describe('First affected version; null or "0": from the first release'),
  lastAffected: z.string().nullable().describe("Last affected version (OSV last_affected)"),
  limit: z.string().nullable().describe("Versions from here on are not in this range (OSV limit)"),
  version: z.string().nullable().describe("One explicitly listed affected version; the bounds are then null"),
}).describe("One span of affected versions, as the advisory's records state it.");

export const advisoryPackage = object({
  ecosystem,
  fixedVersions: z.array(z.string()).describe("The versions the ranges name as fixed, in the records' order"),
  name: z.string().describe("Package name; Maven packages as groupId:artifactId"),
  ranges: z.array(advisoryRange),
});

export const advisory = object({
  advisoriesImportedAt: z
    .string()
    .nullable()
    .describe("When advisories were last imported into the platform (null: not recorded)"),
  affected: z.array(advisoryPackage).describe("Affected packages, by ecosystem and name"),
  aliases: z.array(z.string()),
  id: z.string().describe("CVE id, or the record's own id when it names no CVE"),
  modifiedAt: z.string().nullable().describe("Newest revision among the advisory's records"),
  publishedAt: z.string().nullable(),
  records: z.array(z.string()).describe("Ids of the OSV records the advisory gathers (GHSA-..., ...)"),
  references: z
    .array(object({ type: z.string(), url: z.string() }))
    .describe("Advisory pages, fixes and reports the records list (OSV references)"),
  score: z.number().nullable().describe("CVSS base score where known"),
  severity,
  summary: z.string(),
}).describe("A vulnerability as the imported advisories describe it.");
export type Advisory = z.infer<typeof advisory>;

export const cveInApplication = object({
  affectedPackageCount: integer().describe("Package versions of this analysis the CVE affects"),
  analysis: dateTime.describe("The analysis answered for (the latest at or before date)"),
  id: z.string().describe("The CVE id the advisory is listed under"),
  lastAffectedAnalysis: dateTime
    .nullable()
    .describe(
      "The newest analysis at or before this one that used an affected version: this analysis when it is " +
        "affected, an earlier one when the application has since moved off the affected versions, null when " +
        "no analysis up to this one was affected",
    ),
}).describe("Whether an analysis of the application is affected by a CVE, and when it last was.");
export type CveInApplication = z.infer<typeof cveInApplication>;

/**
 * The resources that have a name of their own: the JSON Schema of each is registered under this name
 * (`$id`), and other schemas refer to it (`Name#`).
 */
export const namedResources = {
  ExternalObject: externalObject,
  CvePackage: cvePackage,
  ApplicationSummary: applicationSummary,
  ApplicationDetail: applicationDetail,
  AnalysisHistoryEntry: analysisHistoryEntry,
  CveInsight: cveInsight,
  Package: packageUse,
  ApplicationObject: applicationObject,
  Interaction: interaction,
  ExternalObjectMatch: externalObjectMatch,
  GateRule: gateRule,
  GateFinding: gateFinding,
  GateEvaluation: gateEvaluation,
  GateHistoryEntry: gateHistoryEntry,
  Comparison: comparison,
  CveReference: cveReference,
  Advisory: advisory,
  CveInApplication: cveInApplication,
} as const;

export interface Changes<T> {
  added: T[];
  addedTotal: number;
  removed: T[];
  removedTotal: number;
}
