/**
 * What a quality gate evaluation reads and what the store keeps of it: the package facts of an
 * analysis, and the rules' outcomes with their findings. The rules themselves are in
 * domain/gate-evaluation.ts. The findings and outcomes are the REST resources of src/contracts, with
 * what the store keeps beside them.
 */
import type {
  GateEvaluation,
  GateFinding as GateFindingAnswer,
  GateRuleResult,
} from "../contracts/resources.ts";

export interface PackageState {
  packageId: number;
  /** The package version row: the objects referred to are this version's. */
  versionId: number;
  name: string;
  version: string;
  /** Its scope in the application (null: unknown, counted as production). */
  scope: string | null;
  saferClosestVersion: string | null;
  safestVersion: string | null;
  /**
   * Published non-prerelease versions after the one in use, up to and including the safest version;
   * null when the package has no safest version.
   */
  releasesBehind: number | null;
  /** At least one application object refers to an external object of this version of the package. */
  referred: boolean;
  /** CVEs affecting the version in use, ordered by id. */
  vulnerabilities: readonly { cve: string; severity: string }[];
}

/** A finding as the REST API answers it, before its referred objects are attached. */
export type GateFinding = Omit<GateFindingAnswer, "objects"> & {
  /** Internal: which package version the finding is about, to attach its objects. */
  versionId: number;
};

/** A rule's outcome with all its findings (the answer pages them and adds `findingsTotal`). */
type RuleOutcome = Pick<GateRuleResult, "id" | "name" | "passed"> & { findings: GateFinding[] };

export interface GateVerdict {
  rules: RuleOutcome[];
  verdict: GateEvaluation["verdict"];
}

export type PackageInterval = Omit<PackageState, "referred"> & { fromSeq: number; toSeq: number };

export interface ReferenceInterval {
  versionId: number;
  fromSeq: number;
  toSeq: number;
}
