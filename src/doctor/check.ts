import type { DoctorCheck } from "../contracts/admin.ts";

/**
 * One row of `imaging doctor` (the contract's DoctorCheck): a stable id such as `challenge-mcp` or
 * `cimd-linked:claude-code`, the title, the verdict, what was observed (`detail`) and, when something
 * is wrong, the fix in one sentence (`fix`, else null). The check functions are pure: observations in,
 * a Check out.
 */
export type Check = DoctorCheck;
type Verdict = Check["verdict"];

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
