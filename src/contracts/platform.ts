/** The platform's constants (DESIGN.md's contract), imported by every part that speaks it. */

/** CVE severities, most severe first. */
export const SEVERITIES = ["CRITICAL", "HIGH", "MEDIUM", "LOW", "UNKNOWN"] as const;
export type Severity = (typeof SEVERITIES)[number];
