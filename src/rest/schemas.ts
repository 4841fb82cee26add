import { paramSchemas } from "./params.ts";
/**
 * JSON schemas of the REST resources. Properties are listed in name order: responses are serialized
 * in schema order, and the API family orders JSON properties by name.
 */
export const dateTime = {
  type: "object",
  properties: { dateTime: { type: "string", format: "date-time", examples: ["2024-04-22T08:41:34Z"] } },
  required: ["dateTime"],
} as const;

export const nullable = <T extends object>(schema: T) => ({ anyOf: [schema, { type: "null" }] });

/** The facts of a package version in use, shared by every resource that lists packages (name order). */
export const packageFactProperties = {
  releaseDate: {
    ...nullable(dateTime),
    description: "Release date of the version in use (null if unknown)",
  },
  releasesPerYear: {
    type: ["integer", "null"],
    description: "Average number of releases per year over the package's published history",
  },
  saferClosestVersion: {
    type: ["string", "null"],
    description: "Smallest upgrade affected by no known vulnerability (null when none exists)",
  },
  safestVersion: {
    type: ["string", "null"],
    description: "Newest release affected by no known vulnerability (null when none exists)",
  },
  version: { type: "string", description: "Package version in use" },
} as const;

export const externalObjectSchema = {
  $id: "ExternalObject",
  type: "object",
  description: "An external object of a package that the application refers to.",
  properties: {
    fullName: { type: "string", description: "Long name locating the object in the software architecture" },
    id: { type: "string", description: "External object ID" },
    mangling: { type: "string", description: "External function signature, or an empty string" },
    name: { type: "string" },
    type: { type: "string", description: "Object type, for display" },
    typeId: { type: "string", description: "Type identifier, the type reference key" },
  },
  required: ["fullName", "id", "mangling", "name", "type", "typeId"],
} as const;

export const cvePackageSchema = {
  $id: "CvePackage",
  type: "object",
  description: "A package of the application affected by the CVE, with its referred external objects.",
  properties: {
    name: { type: "string", description: "Package name; Maven packages as groupId:artifactId" },
    objects: { type: "array", items: { $ref: "ExternalObject#" } },
    ...packageFactProperties,
  },
  required: [
    "name",
    "objects",
    "releaseDate",
    "releasesPerYear",
    "saferClosestVersion",
    "safestVersion",
    "version",
  ],
} as const;

export const applicationSummarySchema = {
  $id: "ApplicationSummary",
  type: "object",
  properties: {
    analysisCount: { type: "integer" },
    demo: { type: "boolean", description: "True for the demo applications shipped with the platform" },
    description: { type: "string" },
    latestAnalysis: nullable(dateTime),
    name: { type: "string" },
  },
  required: ["analysisCount", "demo", "description", "latestAnalysis", "name"],
} as const;

export const applicationDetailSchema = {
  $id: "ApplicationDetail",
  type: "object",
  properties: {
    analyses: { type: "array", items: dateTime, description: "Analysis history, oldest first" },
    counts: {
      type: "object",
      description: "Counts in the latest analysis",
      properties: {
        externalObjects: { type: "integer" },
        packages: { type: "integer" },
        references: { type: "integer" },
        vulnerabilities: { type: "integer" },
        vulnerablePackages: { type: "integer" },
      },
      required: ["externalObjects", "packages", "references", "vulnerabilities", "vulnerablePackages"],
    },
    demo: { type: "boolean" },
    description: { type: "string" },
    latestAnalysis: nullable(dateTime),
    name: { type: "string" },
  },
  required: ["analyses", "counts", "demo", "description", "latestAnalysis", "name"],
} as const;

const countProperties = {
  externalObjects: { type: "integer" },
  packages: { type: "integer" },
  references: { type: "integer" },
  vulnerabilities: { type: "integer" },
  vulnerablePackages: { type: "integer" },
} as const;

export const analysisHistoryEntrySchema = {
  $id: "AnalysisHistoryEntry",
  type: "object",
  description: "An analysis with its counts and its vulnerable packages by severity.",
  properties: {
    analysis: dateTime,
    counts: {
      type: "object",
      properties: countProperties,
      required: ["externalObjects", "packages", "references", "vulnerabilities", "vulnerablePackages"],
    },
    vulnerablePackagesBySeverity: {
      type: "object",
      description:
        "Vulnerable package versions counted once each, under the most severe CVE affecting them (the five " +
        "counts add up to counts.vulnerablePackages)",
      properties: {
        CRITICAL: { type: "integer" },
        HIGH: { type: "integer" },
        LOW: { type: "integer" },
        MEDIUM: { type: "integer" },
        UNKNOWN: { type: "integer" },
      },
      required: ["CRITICAL", "HIGH", "LOW", "MEDIUM", "UNKNOWN"],
    },
  },
  required: ["analysis", "counts", "vulnerablePackagesBySeverity"],
} as const;

export const cveInsightSchema = {
  $id: "CveInsight",
  type: "object",
  properties: {
    affectedPackageCount: { type: "integer" },
    aliases: { type: "array", items: { type: "string" } },
    id: { type: "string", description: "CVE reference" },
    referringObjectCount: {
      type: "integer",
      description: "External objects of the affected packages that the application refers to",
    },
    score: { type: ["number", "null"], description: "CVSS base score where known" },
    severity: { type: "string", enum: ["CRITICAL", "HIGH", "MEDIUM", "LOW", "UNKNOWN"] },
    summary: { type: "string" },
  },
  required: ["affectedPackageCount", "aliases", "id", "referringObjectCount", "score", "severity", "summary"],
} as const;

export const pagingQuery = (what: string, required: boolean) => ({
  type: "object",
  properties: {
    limit: { type: "integer", minimum: 1, maximum: 1000, description: `Maximum number of ${what} to return` },
    skip: { ...paramSchemas.skip, default: 0, description: `Number of ${what} to skip first` },
    date: {
      ...paramSchemas.dateTime,
      description:
        "ISO 8601 date-time: use the latest analysis at or before this instant (default: the latest)",
    },
  },
  ...(required ? { required: ["limit"] } : {}),
});

export const errorResponses = {
  400: { description: "Invalid parameter", $ref: "Problem#" },
  401: { description: "Missing or invalid credentials", $ref: "Problem#" },
  403: { description: "The caller may not read this application", $ref: "Problem#" },
  404: { description: "Unknown application, or no analysis at or before the date", $ref: "Problem#" },
} as const;
