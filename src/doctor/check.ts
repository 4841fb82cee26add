/**
 * One row of `imaging doctor`: what was checked, the verdict, what was observed and, when something is
 * wrong, the fix in one sentence. The check functions are pure: observations in, a Check out.
 */
export type Verdict = "pass" | "fail" | "warn" | "n/a";

export interface Check {
  /** Stable identifier, e.g. `challenge-mcp` or `cimd-linked:claude-code`. */
  id: string;
  title: string;
  verdict: Verdict;
  /** What was observed. */
  detail: string;
  /** The fix in one sentence; null when there is nothing to fix. */
  fix: string | null;
}

export interface CheckDefinition {
  id: string;
  title: string;
}

export const pass = (def: CheckDefinition, detail: string): Check => ({
  ...def,
  verdict: "pass",
  detail,
  fix: null,
});

export const fail = (def: CheckDefinition, detail: string, fix: string): Check => ({
  ...def,
  verdict: "fail",
  detail,
  fix,
});

export const warn = (def: CheckDefinition, detail: string, fix: string): Check => ({
  ...def,
  verdict: "warn",
  detail,
  fix,
});

export const notApplicable = (def: CheckDefinition, detail: string): Check => ({
  ...def,
  verdict: "n/a",
  detail,
  fix: null,
});

/** A check that could not run because an earlier one failed: a warning, so it is not mistaken for a pass. */
export const notRun = (def: CheckDefinition, reason: string, fix: string): Check =>
  warn(def, `not checked: ${reason}`, fix);

export function summarize(checks: readonly Check[]): Record<Verdict, number> {
  const counts: Record<Verdict, number> = { pass: 0, fail: 0, warn: 0, "n/a": 0 };
  for (const check of checks) counts[check.verdict]++;
  return counts;
}
