/**
 * Tools of the gatekeeper MCP server: the quality gate rules, the pass/fail verdict of an analysis,
 * the verdicts over an application's history, and what changed between two analyses.
 */
import * as z from "zod";
import {
  changes,
  gateEvaluation,
  gateFinding,
  gateHistoryEntry,
  gateRule,
  gateRuleResult,
  packageVersion,
  referenceChange,
  vulnerablePackageChange,
} from "../../contracts/resources.ts";
import type { Changes, GateFinding } from "../rest-client.ts";
import {
  type AnyToolSpec,
  applicationInput,
  dateInput,
  defineTool,
  pageOutput,
  pagingInput,
  readPage,
} from "../tool-kit.ts";
import { clip, joinLines, pageNote, plural, table } from "../tool-text.ts";

export const GATEKEEPER_INSTRUCTIONS = [
  "Decides whether an analyzed application passes the platform's quality gate (its dependency rules), " +
    "explains each failure and tracks verdicts and changes across the application's analyses.",
  "`gates` lists the configured rules. `evaluate_gate` gives the pass/fail verdict for an application as of " +
    "a date, with each failing rule and the packages, CVEs and referred objects behind it. `gate_history` " +
    "shows the verdict of every analysis; `compare_analyses` shows the packages, vulnerable packages and " +
    "references added or removed between two analyses, e.g. to explain why a verdict changed.",
  "Dates are ISO 8601 date-times such as 2024-03-01T00:00:00Z and select the latest analysis at or before " +
    "that instant. Application names come from the analysis server's `applications` tool or from the user.",
  "You only see the applications your account may read: a 403 error means no access to that application.",
].join("\n\n");

// -------------------------------------------------------------------------------------------------

const gates = defineTool({
  name: "gates",
  title: "Quality gate rules",
  description:
    "List the quality gate rules configured on the platform: id, name, kind, whether enabled, parameters " +
    "(e.g. minSeverity, maxReleases) and what each checks. Only enabled rules take part in evaluate_gate. " +
    "Use it to explain what the gate requires.",
  input: z.object({}),
  output: z.object({
    rules: z.array(gateRule),
  }),
  async run(_args, rest) {
    const rules = await rest.listGates();
    const enabled = rules.filter((r) => r.enabled).length;
    const text =
      rules.length === 0
        ? "No quality gate rule is configured."
        : joinLines(
            `${plural(rules.length, "quality gate rule")} (${enabled} enabled):`,
            table(
              ["rule", "enabled", "name", "parameters", "checks"],
              rules.map((r) => [
                r.id,
                r.enabled ? "yes" : "no",
                r.name,
                Object.keys(r.parameters).length ? JSON.stringify(r.parameters) : "-",
                clip(r.description, 120),
              ]),
            ),
          );
    return { structured: { rules }, text };
  },
});

// -------------------------------------------------------------------------------------------------

const FINDINGS_SHOWN = 10;

const findingOutput = gateFinding;

/** The finding's sentence already names the package, version, CVE and severity. */
const renderFinding = (f: GateFinding) => {
  const objects = f.objects?.length
    ? ` Referred objects: ${f.objects
        .slice(0, 3)
        .map((o) => o.fullName)
        .join(", ")}${f.objects.length > 3 ? ` and ${f.objects.length - 3} more` : ""}.`
    : "";
  return `  - ${f.detail}${objects}`;
};

const evaluateGate = defineTool({
  name: "evaluate_gate",
  title: "Evaluate the quality gate",
  description:
    "Evaluate the enabled quality gate rules on an application's analysis and give the verdict (pass or " +
    "fail), with each rule's result and, for each failing rule, its findings: the package and version, the " +
    "CVE and severity where relevant, a sentence saying what fails and the referred external objects. Use it " +
    'for "does X pass the gate?" or "why does X fail?". date selects the analysis (default: latest).',
  input: z.object({ application: applicationInput, date: dateInput("evaluate") }),
  output: gateEvaluation.extend({
    analysis: z.string().describe("Date-time of the evaluated analysis"),
    rules: z.array(
      gateRuleResult.extend({
        findings: z.array(findingOutput).describe("The rule's first 100 findings, in package order"),
      }),
    ),
  }),
  async run(args, rest) {
    const e = await rest.evaluateGates(args.application, { date: args.date });
    const failed = e.rules.filter((r) => !r.passed);
    const header =
      `${e.application}: ${e.verdict === "pass" ? "PASS" : "FAIL"} (analysis of ${e.analysis.dateTime}): ` +
      (e.rules.length === 0
        ? "no rule is enabled."
        : failed.length === 0
          ? `all ${plural(e.rules.length, "enabled rule")} pass.`
          : `${failed.length} of ${plural(e.rules.length, "enabled rule")} fail.`);
    const lines = e.rules.map((r) => {
      if (r.passed) return `- pass: ${r.id} (${r.name})`;
      const shown = r.findings.slice(0, FINDINGS_SHOWN).map(renderFinding);
      if (r.findingsTotal > shown.length) {
        shown.push(
          `  - … and ${r.findingsTotal - shown.length} more findings ` +
            `(the first ${r.findings.length} in structuredContent)`,
        );
      }
      return [`- FAIL: ${r.id} (${r.name}), ${plural(r.findingsTotal, "finding")}:`, ...shown].join("\n");
    });
    return {
      structured: { ...e, analysis: e.analysis.dateTime },
      text: joinLines(header, lines.join("\n")),
    };
  },
});

// -------------------------------------------------------------------------------------------------

const gateHistory = defineTool({
  name: "gate_history",
  title: "Quality gate verdict history",
  description:
    "The quality gate verdict (pass or fail) of each analysis of an application, newest first, with the ids " +
    "of the rules that failed. Use it to see when an application started or stopped passing; then " +
    "compare_analyses between two dates explains the change. Paged: limit (default 50) and skip.",
  input: z.object({ application: applicationInput, ...pagingInput("analyses", 50) }),
  output: z.object({
    application: z.string(),
    history: z.array(gateHistoryEntry.extend({ analysis: z.string().describe("Date-time of the analysis") })),
    page: pageOutput,
  }),
  async run(args, rest) {
    const { items, page } = await readPage(args, (p) => rest.gateHistory(args.application, p));
    const history = items.map((h) => ({ ...h, analysis: h.analysis.dateTime }));
    const text =
      history.length === 0
        ? pageNote(page, "analyses") || `${args.application} has no analysis yet.`
        : joinLines(
            `Quality gate verdicts of ${args.application}, newest first:`,
            table(
              ["analysis", "verdict", "failed rules"],
              history.map((h) => [h.analysis, h.verdict.toUpperCase(), h.failedRules.join(", ")]),
            ),
            pageNote(page, "analyses"),
          );
    return { structured: { application: args.application, history, page }, text };
  },
});

// -------------------------------------------------------------------------------------------------

const LIST_SHOWN = 15;

function changesOf<T>(c: Changes<T>) {
  return { added: c.added, removed: c.removed, addedTotal: c.addedTotal, removedTotal: c.removedTotal };
}

const changesOutput = <T extends z.ZodType>(item: T, what: string) =>
  changes(item).extend({
    added: z.array(item).describe(`${what} in the 'to' analysis only (at most limit items, from skip)`),
    removed: z.array(item).describe(`${what} in the 'from' analysis only (at most limit items, from skip)`),
  });

function renderChanges<T>(title: string, c: Changes<T>, skip: number, render: (item: T) => string): string {
  if (c.addedTotal === 0 && c.removedTotal === 0) return `${title}: no change.`;
  const part = (sign: string, list: T[], total: number) => {
    const lines = list.slice(0, LIST_SHOWN).map((i) => `  ${sign} ${render(i)}`);
    const rest = total - skip - Math.min(list.length, LIST_SHOWN);
    if (rest > 0) lines.push(`  ${sign} … and ${rest} more`);
    return lines;
  };
  return [
    `${title}: ${c.addedTotal} added, ${c.removedTotal} removed.${skip > 0 ? ` From item ${skip + 1} of each list:` : ""}`,
    ...part("+", c.added, c.addedTotal),
    ...part("-", c.removed, c.removedTotal),
  ].join("\n");
}

const compareAnalyses = defineTool({
  name: "compare_analyses",
  title: "Compare two analyses",
  description:
    "What changed in an application between two analyses: packages added or removed (a version change shows " +
    "as one removed and one added), vulnerable package versions added or removed with their CVEs, and " +
    "references from application objects to external objects added or removed. from and to are ISO 8601 " +
    "date-times (e.g. 2024-01-01T00:00:00Z); each selects the latest analysis at or before it; to defaults " +
    "to the latest analysis. Each list gives at most limit items from skip, with its total. Use it to explain " +
    "a change of gate verdict or of exposure to a CVE.",
  input: z.object({
    application: applicationInput,
    from: z
      .string()
      .min(1)
      .describe(
        "ISO 8601 date-time of the baseline, e.g. 2024-01-01T00:00:00Z (latest analysis at or before it)",
      ),
    to: z
      .string()
      .min(1)
      .optional()
      .describe("ISO 8601 date-time to compare with the baseline; omit for the latest analysis"),
    limit: z
      .number()
      .int()
      .min(1)
      .max(1000)
      .default(100)
      .describe("Maximum items returned in each added/removed list (default 100); totals are always given"),
    skip: z
      .number()
      .int()
      .min(0)
      .default(0)
      .describe("Items of each added/removed list to skip first, to read past the first limit items"),
  }),
  output: z.object({
    application: z.string(),
    from: z.string().describe("Date-time of the baseline analysis"),
    to: z.string().describe("Date-time of the compared analysis"),
    packages: changesOutput(packageVersion, "Package versions"),
    vulnerablePackages: changesOutput(vulnerablePackageChange, "Vulnerable package versions"),
    references: changesOutput(referenceChange, "References"),
  }),
  async run(args, rest) {
    const c = await rest.compare(args.application, {
      from: args.from,
      to: args.to,
      limit: args.limit,
      skip: args.skip,
    });
    const same = c.from.dateTime === c.to.dateTime;
    const text = joinLines(
      same
        ? `Both dates select the same analysis of ${args.application} (${c.from.dateTime}): nothing changed.`
        : `${args.application}: changes from the analysis of ${c.from.dateTime} to that of ${c.to.dateTime}.`,
      !same && renderChanges("Packages", c.packages, args.skip, (p) => `${p.name} ${p.version}`),
      !same &&
        renderChanges(
          "Vulnerable packages",
          c.vulnerablePackages,
          args.skip,
          (p) => `${p.name} ${p.version} (${p.vulnerabilities.join(", ")})`,
        ),
      !same &&
        renderChanges(
          "References",
          c.references,
          args.skip,
          (r) => `${r.source.fullName} -> ${r.target.fullName} (${r.target.package} ${r.target.version})`,
        ),
    );
    return {
      structured: {
        application: args.application,
        from: c.from.dateTime,
        to: c.to.dateTime,
        packages: changesOf(c.packages),
        vulnerablePackages: changesOf(c.vulnerablePackages),
        references: changesOf(c.references),
      },
      text,
    };
  },
});

export const gatekeeperTools: readonly AnyToolSpec[] = [gates, evaluateGate, gateHistory, compareAnalyses];
