/**
 * What a quality gate evaluation reads and what the store keeps of it: the package facts of an
 * analysis, and the rules' outcomes with their findings. The rules themselves are in
 * domain/gate-evaluation.ts.
 */

export interface PackageState {
  packageId: number;
  name: string;
  version: string;
  saferClosestVersion: string | null;
  safestVersion: string | null;
  /**
   * Published non-prerelease versions after the one in use, up to and including the safest version;
   * null when the package has no safest version.
   */
  releasesBehind: number | null;
  /** At least one application object refers to an external object of the package. */
  referred: boolean;
  /** CVEs affecting the version in use, ordered by id. */
  vulnerabilities: readonly { cve: string; severity: string }[];
}

export interface GateFinding {
  cve?: string;
  detail: string;
  package: string;
  /** Internal: which package the finding is about, to attach its objects. */
  packageId: number;
  severity?: string;
  version: string;
}

export interface RuleOutcome {
  findings: GateFinding[];
  id: string;
  name: string;
  passed: boolean;
}

export interface GateVerdict {
  rules: RuleOutcome[];
  verdict: "pass" | "fail";
}

export type PackageInterval = Omit<PackageState, "referred"> & { fromSeq: number; toSeq: number };

export interface ReferenceInterval {
  packageId: number;
  fromSeq: number;
  toSeq: number;
}
