/**
 * Quality gate evaluation as a pure function: the packages of one analysis (with their facts) and the
 * rules in, each enabled rule's findings and the verdict out. The store reads the facts and keeps the
 * verdicts (store/gates.ts); the rules are here.
 */
import { DEVELOPMENT_SCOPES, severityRank } from "../contracts/platform.ts";
import type {
  GateFinding,
  GateVerdict,
  PackageInterval,
  PackageState,
  ReferenceInterval,
} from "../store/gate-records.ts";
import { effectiveGateParameters, type GateRule } from "./gate-kinds.ts";

/**
 * The packages a rule counts: by default those a production install keeps (as Snyk counts them: npm dev
 * and Maven test scopes left out; an unknown scope counts), every one with `packages: "all"`.
 */
function countedPackages(parameters: Record<string, unknown>, packages: readonly PackageState[]) {
  if (parameters.packages === "all") return packages;
  return packages.filter((p) => !(DEVELOPMENT_SCOPES as readonly (string | null)[]).includes(p.scope));
}

/** Findings of one rule over the packages of an analysis, in the packages' order. */
export function ruleFindings(rule: GateRule, all: readonly PackageState[]): GateFinding[] {
  const parameters = effectiveGateParameters(rule.kind, rule.parameters);
  const packages = countedPackages(parameters, all);
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
            severity: v.severity,
            version: p.version,
            versionId: p.versionId,
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
          version: p.version,
          versionId: p.versionId,
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
          severity: worst.severity,
          version: p.version,
          versionId: p.versionId,
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

/**
 * The package states of analysis `seq` from interval rows spanning several analyses: the rows valid
 * in `seq`, each marked referred when one of its version's reference intervals covers `seq`.
 */
export function statesAt(
  seq: number,
  packages: readonly PackageInterval[],
  references: readonly ReferenceInterval[],
): PackageState[] {
  const referred = new Set<number>();
  for (const r of references) if (r.fromSeq <= seq && seq < r.toSeq) referred.add(r.versionId);
  return packages
    .filter((p) => p.fromSeq <= seq && seq < p.toSeq)
    .map(({ fromSeq: _from, toSeq: _to, ...state }) => ({
      ...state,
      referred: referred.has(state.versionId),
    }));
}
