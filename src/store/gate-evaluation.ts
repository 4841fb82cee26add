/**
 * Quality gate evaluation as a pure function: the packages of one analysis (with their facts) and the
 * rules in, each enabled rule's findings and the verdict out.
 */
import { effectiveGateParameters, type GateRule, severityRank } from "./gate-kinds.ts";

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

/** Findings of one rule over the packages of an analysis, in the packages' order. */
export function ruleFindings(rule: GateRule, packages: readonly PackageState[]): GateFinding[] {
  const parameters = effectiveGateParameters(rule.kind, rule.parameters);
  const findings: GateFinding[] = [];
  switch (rule.kind) {
    case "no-referenced-severe-cve": {
      const threshold = severityRank(String(parameters.minSeverity));
      for (const p of packages) {
        if (!p.referred) continue;
        for (const v of p.vulnerabilities) {
          if (severityRank(v.severity) < threshold) continue;
          findings.push({
            cve: v.cve,
            detail: `${v.cve} (${v.severity}) affects ${p.name} ${p.version}, whose objects the application refers to.`,
            package: p.name,
            packageId: p.packageId,
            severity: v.severity,
            version: p.version,
          });
        }
      }
      break;
    }
    case "max-releases-behind-safest": {
      const max = Number(parameters.maxReleases);
      for (const p of packages) {
        if (p.releasesBehind === null || p.releasesBehind <= max) continue;
        findings.push({
          detail:
            `${p.name} ${p.version} is ${p.releasesBehind} releases behind its safest version ` +
            `${p.safestVersion}, more than the ${max} allowed.`,
          package: p.name,
          packageId: p.packageId,
          version: p.version,
        });
      }
      break;
    }
    case "no-unfixable-vulnerability": {
      for (const p of packages) {
        if (p.vulnerabilities.length === 0 || p.saferClosestVersion !== null) continue;
        const worst = p.vulnerabilities.reduce((a, b) =>
          severityRank(b.severity) > severityRank(a.severity) ? b : a,
        );
        findings.push({
          detail:
            `${p.name} ${p.version} is affected by ${p.vulnerabilities.map((v) => v.cve).join(", ")} ` +
            "and no upgrade is free of known vulnerabilities.",
          package: p.name,
          packageId: p.packageId,
          severity: worst.severity,
          version: p.version,
        });
      }
      break;
    }
  }
  return findings;
}

/** Evaluates the enabled rules (ordered by id); the verdict fails when any of them has a finding. */
export function evaluateGates(rules: readonly GateRule[], packages: readonly PackageState[]): GateVerdict {
  const outcomes = rules
    .filter((r) => r.enabled)
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map((rule) => {
      const findings = ruleFindings(rule, packages);
      return { findings, id: rule.id, name: rule.name, passed: findings.length === 0 };
    });
  return { rules: outcomes, verdict: outcomes.every((o) => o.passed) ? "pass" : "fail" };
}

export type PackageInterval = Omit<PackageState, "referred"> & { fromSeq: number; toSeq: number };

export interface ReferenceInterval {
  packageId: number;
  fromSeq: number;
  toSeq: number;
}

/**
 * The package states of analysis `seq` from interval rows spanning several analyses: the rows valid
 * in `seq`, each marked referred when one of its package's reference intervals covers `seq`.
 */
export function statesAt(
  seq: number,
  packages: readonly PackageInterval[],
  references: readonly ReferenceInterval[],
): PackageState[] {
  const referred = new Set<number>();
  for (const r of references) if (r.fromSeq <= seq && seq < r.toSeq) referred.add(r.packageId);
  return packages
    .filter((p) => p.fromSeq <= seq && seq < p.toSeq)
    .map(({ fromSeq: _from, toSeq: _to, ...state }) => ({
      ...state,
      referred: referred.has(state.packageId),
    }));
}
