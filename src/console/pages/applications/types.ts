/** The REST resources the Applications pages read (src/rest/schemas.ts and friends, as JSON). */
export interface DateTime {
  dateTime: string;
}

export interface ApplicationSummary {
  analysisCount: number;
  demo: boolean;
  description: string;
  latestAnalysis: DateTime | null;
  name: string;
}

export interface Counts {
  externalObjects: number;
  packages: number;
  references: number;
  vulnerabilities: number;
  vulnerablePackages: number;
}

export interface ApplicationDetail {
  analyses: DateTime[];
  counts: Counts;
  demo: boolean;
  description: string;
  latestAnalysis: DateTime | null;
  name: string;
}

export const SEVERITIES = ["CRITICAL", "HIGH", "MEDIUM", "LOW", "UNKNOWN"] as const;
export type Severity = (typeof SEVERITIES)[number];

export interface AnalysisHistoryEntry {
  analysis: DateTime;
  counts: Counts;
  vulnerablePackagesBySeverity: Record<Severity, number>;
}

export interface CveInsight {
  affectedPackageCount: number;
  aliases: string[];
  id: string;
  referringObjectCount: number;
  score: number | null;
  severity: Severity;
  summary: string;
}

export interface ExternalObject {
  fullName: string;
  id: string;
  mangling: string;
  name: string;
  type: string;
  typeId: string;
}

export interface PackageFacts {
  releaseDate: DateTime | null;
  releasesPerYear: number | null;
  saferClosestVersion: string | null;
  safestVersion: string | null;
  version: string;
}

export interface CvePackage extends PackageFacts {
  name: string;
  objects: ExternalObject[];
}

export interface ApplicationObject {
  fullName: string;
  id: string;
  name: string;
  type: string;
  typeId: string;
}

export interface Interaction {
  source: ApplicationObject;
  target: ExternalObject;
}

export interface Package extends PackageFacts {
  ecosystem: "npm" | "maven";
  maxSeverity: Severity | null;
  name: string;
  vulnerabilities: string[];
}

export interface GateEvaluation {
  analysis: DateTime;
  application: string;
  rules: {
    findings: {
      cve?: string;
      detail: string;
      package: string;
      severity?: string;
      version: string;
      objects?: ExternalObject[];
    }[];
    /** The API lists the first 100 findings of a rule; this counts them all. */
    findingsTotal: number;
    id: string;
    name: string;
    passed: boolean;
  }[];
  verdict: "pass" | "fail";
}

export interface GateHistoryEntry {
  analysis: DateTime;
  failedRules: string[];
  verdict: "pass" | "fail";
}

/** The first page (100 items) of each list, and the length of each whole list. */
export interface Changes<T> {
  added: T[];
  addedTotal: number;
  removed: T[];
  removedTotal: number;
}

export interface Comparison {
  from: DateTime;
  to: DateTime;
  packages: Changes<{ name: string; version: string }>;
  references: Changes<ReferenceChange>;
  vulnerablePackages: Changes<{ name: string; version: string; vulnerabilities: string[] }>;
}

export interface ReferenceChange {
  source: { fullName: string; id: string };
  target: { fullName: string; id: string; package: string };
}
