/**
 * OSV's range evaluation (ossf/osv-schema, "Evaluation"), turned into spans the store keeps:
 *
 *   IncludedInRanges(v): BeforeLimits(v) and, walking the events sorted by version, introduced sets
 *   "vulnerable" when v >= it, fixed clears it when v >= it, last_affected clears it when v > it.
 *
 * Between two consecutive event versions the outcome is constant, so a range with any number of events
 * is exactly a union of spans [introduced, fixed) / [introduced, lastAffected] / [introduced, ∞), each
 * below the range's highest `limit` (v < some limit ⇔ v < the highest; a limit containing "*" is
 * infinity). Events of equal versions keep their order in the record (a stable sort).
 */
import { type AffectedRange, compareVersions, type Ecosystem } from "./index.ts";

export type OsvEvent =
  | { introduced: string }
  | { fixed: string }
  | { last_affected: string }
  | { limit: string };

interface Step {
  kind: "introduced" | "fixed" | "last_affected";
  version: string;
}

const stepOf = (event: OsvEvent): Step | null => {
  if ("introduced" in event) return { kind: "introduced", version: event.introduced };
  if ("fixed" in event) return { kind: "fixed", version: event.fixed };
  if ("last_affected" in event) return { kind: "last_affected", version: event.last_affected };
  return null;
};

/** The spans of one OSV `SEMVER` or `ECOSYSTEM` range, ordered by the ecosystem's version order. */
export function spansOfOsvRange(ecosystem: Ecosystem, events: readonly OsvEvent[]): AffectedRange[] {
  const limits = events.flatMap((e) => ("limit" in e ? [e.limit] : []));
  let limit: string | null = null;
  if (limits.length > 0 && !limits.some((l) => l.includes("*"))) {
    limit = limits.reduce((a, b) => (compareVersions(ecosystem, b, a) > 0 ? b : a));
  }
  const isZero = (s: Step) => s.kind === "introduced" && s.version === "0";
  const compare = (a: Step, b: Step) => {
    if (isZero(a) || isZero(b)) return isZero(a) === isZero(b) ? 0 : isZero(a) ? -1 : 1;
    return compareVersions(ecosystem, a.version, b.version);
  };
  const steps = events.map(stepOf).filter((s): s is Step => s !== null);
  steps.sort(compare); // Array.prototype.sort is stable

  // Group the sorted events by equal version: the outcome only changes at a group.
  const groups: Step[][] = [];
  for (const step of steps) {
    const last = groups.at(-1);
    if (last && compare(last[0] as Step, step) === 0) last.push(step);
    else groups.push([step]);
  }

  const spans: AffectedRange[] = [];
  let open: string | null = null; // introduced version of the span being built
  let afterPrevious = false; // the outcome just above the previous group's version
  for (const group of groups) {
    const version = (group[0] as Step).version;
    const zero = isZero(group[0] as Step);
    // At v equal to this version, fixed and introduced events of the group fire, last_affected does not.
    const firing = group.filter((s) => s.kind !== "last_affected");
    const atVersion = firing.length > 0 ? (firing.at(-1) as Step).kind === "introduced" : afterPrevious;
    // Just above it, every event of the group has fired: the last one decides.
    const above = (group.at(-1) as Step).kind === "introduced";
    if (open === null && (atVersion || (zero && above))) open = zero ? "0" : version;
    if (open !== null && !atVersion && !zero) {
      spans.push({ introduced: open, fixed: version });
      open = null;
    } else if (open !== null && !above) {
      spans.push({ introduced: open, lastAffected: version });
      open = null;
    }
    afterPrevious = above;
  }
  if (open !== null) spans.push({ introduced: open });
  return limit === null ? spans : spans.map((s) => ({ ...s, limit }));
}
