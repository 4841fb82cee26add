/**
 * Quality gate evaluation of an analysis: the rules (gate-evaluation.ts) applied to the facts the
 * store reads, the verdict kept by the store until the facts change, and the history of verdicts.
 */
import type { Kysely } from "kysely";
import type { GateVerdict } from "../store/gate-records.ts";
import {
  type GateEvaluation,
  type GateHistoryEntry,
  gateInputs,
  historyAnalyses,
  listGateRules,
  type PagedOutcomes,
  type Paging,
  readStoredOutcomes,
  referredObjectsSamples,
  storeVerdict,
} from "../store/gates.ts";
import type { Database } from "../store/schema.ts";
import { evaluateGates, statesAt } from "./gate-evaluation.ts";

type Db = Kysely<Database>;

/** Evaluates the enabled rules on analysis `seq` from the facts, every finding (no objects). */
async function computeVerdict(db: Db, applicationId: number, seq: number): Promise<GateVerdict> {
  const rules = await listGateRules(db);
  const inputs = await gateInputs(db, applicationId, seq, seq);
  return evaluateGates(rules, statesAt(seq, inputs.packages, inputs.references));
}

function pageOf(verdict: GateVerdict, paging: Paging): PagedOutcomes {
  return {
    rules: verdict.rules.map((rule) => ({
      findings: paging ? rule.findings.slice(paging.skip, paging.skip + paging.limit) : rule.findings,
      findingsTotal: rule.findings.length,
      id: rule.id,
      name: rule.name,
      passed: rule.passed,
    })),
    verdict: verdict.verdict,
  };
}

/** The stored outcomes (store/gates.ts), or the verdict computed now and stored for the next reads. */
async function storedOutcomes(
  db: Db,
  applicationId: number,
  seq: number,
  paging: Paging,
): Promise<PagedOutcomes> {
  const stored = await readStoredOutcomes(db, applicationId, seq, paging);
  if (stored.outcomes) return stored.outcomes;
  const verdict = await computeVerdict(db, applicationId, seq);
  await storeVerdict(db, applicationId, seq, stored.generation, verdict);
  return pageOf(verdict, paging);
}

/**
 * Evaluates the enabled rules on analysis `seq`: the stored verdict, or the facts when `fresh`. With
 * `paging`, each rule lists the findings skip..skip+limit (its total in `findingsTotal`); CVE findings
 * list up to 20 referred objects, read for the listed findings only.
 */
export async function evaluateAnalysis(
  db: Db,
  applicationId: number,
  seq: number,
  paging?: { limit: number; skip: number },
  options: { fresh?: boolean } = {},
): Promise<GateEvaluation> {
  const result = options.fresh
    ? pageOf(await computeVerdict(db, applicationId, seq), paging)
    : await storedOutcomes(db, applicationId, seq, paging);
  const withObjects = new Set(
    result.rules.flatMap((r) => r.findings.filter((f) => f.cve !== undefined).map((f) => f.versionId)),
  );
  const objects = await referredObjectsSamples(db, applicationId, seq, [...withObjects]);
  return {
    rules: result.rules.map((rule) => ({
      findings: rule.findings.map(({ versionId, ...finding }) =>
        finding.cve === undefined ? finding : { ...finding, objects: objects.get(versionId) ?? [] },
      ),
      findingsTotal: rule.findingsTotal,
      id: rule.id,
      name: rule.name,
      passed: rule.passed,
    })),
    verdict: result.verdict,
  };
}

/** The verdict of every analysis of the page, newest first, from one read of the intervals. */
export async function gateHistory(
  db: Db,
  applicationId: number,
  paging: { limit: number; skip: number },
): Promise<GateHistoryEntry[]> {
  const analyses = await historyAnalyses(db, applicationId, paging);
  if (analyses.length === 0) return [];
  const seqs = analyses.map((a) => a.seq);
  const rules = await listGateRules(db);
  const inputs = await gateInputs(db, applicationId, Math.min(...seqs), Math.max(...seqs));
  return analyses.map((a) => {
    const result = evaluateGates(rules, statesAt(a.seq, inputs.packages, inputs.references));
    return {
      analyzedAt: a.analyzed_at,
      failedRules: result.rules.filter((r) => !r.passed).map((r) => r.id),
      verdict: result.verdict,
    };
  });
}
