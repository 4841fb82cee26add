/**
 * The default quality gate on software nobody here wrote (npm run bench:gate-defaults, issue 30 point 5):
 * each subject of the evaluation corpus (test/support/corpus, the inputs bench:scan:accuracy scores)
 * recorded by `imaging scan` into a store of its own, as a user records it (package facts from the
 * registries), with a sample of real advisories imported first (test/fixtures/osv/gate-corpus). Then, per
 * subject:
 *
 * - the verdict of the rules as a new store ships them, and the findings of each rule;
 * - the production packages the releases rule (`max-releases-behind-safest`, off by default) would flag
 *   at several thresholds: what decided its default.
 *
 * Environment: BENCH_GATE_SUBJECTS (comma-separated subject ids; default all). Prints a Markdown report
 * (docs/benchmarks.md keeps the recorded one).
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { DEVELOPMENT_SCOPES } from "../../src/contracts/platform.ts";
import { ruleFindings, statesAt } from "../../src/domain/gate-evaluation.ts";
import { evaluateAnalysis } from "../../src/domain/gates.ts";
import { findApplication } from "../../src/store/applications.ts";
import { openStore } from "../../src/store/database.ts";
import { gateInputs } from "../../src/store/gates.ts";
import { CLI } from "../support/cli.ts";
import { JAVA_CORPUS, javaCorpusSubject } from "../support/corpus/java-corpus.ts";
import { NPM_CORPUS, npmCorpusSubject } from "../support/corpus/npm-corpus.ts";
import { timed } from "../support/corpus/peers.ts";
import { ORACLE_REPOSITORY, SUBJECTS_DIR, shareScannerHttpCache } from "../support/maven-subjects.ts";

const SELF = fileURLToPath(import.meta.url);

/** Real GHSA records of packages the corpus holds (their source and licence: test/fixtures/osv/SOURCES.md). */
export const GATE_ADVISORIES = fileURLToPath(new URL("../fixtures/osv/gate-corpus", import.meta.url));

/** The releases rule's thresholds the report tries (10: its default). */
export const RELEASE_THRESHOLDS = [10, 25, 50, 100, 200] as const;

export interface GateSubjectResult {
  id: string;
  ecosystem: "npm" | "maven";
  /** Packages of the analysis, and those a production install keeps (the ones rules count). */
  packages: number;
  production: number;
  error?: string;
  /** The rules as shipped: the verdict, and the number of findings of each enabled rule. */
  shipped: { verdict: string; findings: Record<string, number>; details: string[] };
  /** Threshold → production packages the releases rule flags at it (more releases behind). */
  releasesBehind: Record<number, number>;
  /** The package furthest behind its safest version, for the reader. */
  furthest?: string;
}

export interface GateReport {
  subjects: GateSubjectResult[];
  machine: string;
}

/** Records `input` into a new store with the advisory sample, and evaluates the gate on it. */
async function gateSubject(id: string, ecosystem: "npm" | "maven", input: string, work: string) {
  const dataDir = join(work, "data");
  mkdirSync(dataDir, { recursive: true });
  shareScannerHttpCache(dataDir);
  const env = { MAVEN_LOCAL_REPOSITORY: ORACLE_REPOSITORY, DATABASE_URL: "" };
  // the advisory sample first, then the scan: the way an administrator's store has both
  for (const args of [
    ["advisories", "import", GATE_ADVISORIES],
    ["scan", input, "--app", "corpus", "--json"],
  ]) {
    const run = await timed(process.execPath, [CLI, ...args, "--data-dir", dataDir], env);
    if (run.code !== 0)
      return {
        id,
        ecosystem,
        packages: 0,
        production: 0,
        releasesBehind: {},
        shipped: { verdict: "error", findings: {}, details: [] },
        error: run.stderr.slice(-300),
      };
  }
  const store = await openStore({ sqliteFile: join(dataDir, "imaging.db"), readWorkers: 0 });
  try {
    const application = await findApplication(store.db, "corpus");
    if (!application) throw new Error("the scan recorded no application");
    const seq = 1;
    const shipped = await evaluateAnalysis(store.db, application.id, seq, undefined, { fresh: true });
    const inputs = await gateInputs(store.db, application.id, seq, seq);
    const states = statesAt(seq, inputs.packages, inputs.references);
    const releasesBehind: Record<number, number> = {};
    for (const maxReleases of RELEASE_THRESHOLDS) {
      const rule = {
        description: "",
        enabled: true,
        id: "releases",
        kind: "max-releases-behind-safest",
        name: "",
        parameters: { maxReleases },
      };
      releasesBehind[maxReleases] = ruleFindings(rule, states).length;
    }
    // what the rules count by default: the packages a production install keeps
    const production = states.filter(
      (p) => !(DEVELOPMENT_SCOPES as readonly (string | null)[]).includes(p.scope),
    );
    const furthestState = production
      .filter((p) => p.releasesBehind !== null)
      .sort((a, b) => (b.releasesBehind ?? 0) - (a.releasesBehind ?? 0))[0];
    return {
      id,
      ecosystem,
      packages: states.length,
      production: production.length,
      shipped: {
        verdict: shipped.verdict,
        findings: Object.fromEntries(shipped.rules.map((r) => [r.id, r.findingsTotal])),
        details: shipped.rules.flatMap((r) => r.findings.map((f) => f.detail)),
      },
      releasesBehind,
      ...(furthestState
        ? {
            furthest: `${furthestState.name} ${furthestState.version}: ${furthestState.releasesBehind} behind ${furthestState.safestVersion}`,
          }
        : {}),
    } satisfies GateSubjectResult;
  } finally {
    await store.close();
  }
}

export async function benchGateDefaults(options: {
  subjects?: string[];
  onSubject?: (r: GateSubjectResult) => void;
}): Promise<GateReport> {
  const wanted = (id: string) => options.subjects === undefined || options.subjects.includes(id);
  const runs = join(SUBJECTS_DIR, "corpus", "runs");
  mkdirSync(runs, { recursive: true });
  const subjects: GateSubjectResult[] = [];
  const run = async (id: string, ecosystem: "npm" | "maven", input: string) => {
    const work = mkdtempSync(join(runs, `gate-${id}-`));
    try {
      const r = await gateSubject(id, ecosystem, input, work);
      subjects.push(r);
      options.onSubject?.(r);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  };
  for (const s of NPM_CORPUS.filter((x) => wanted(x.id)))
    await run(s.id, "npm", join(npmCorpusSubject(s), "app"));
  for (const s of JAVA_CORPUS.filter((x) => wanted(x.id))) {
    const prepared = await javaCorpusSubject(s);
    await run(s.id, "maven", prepared.artifact ?? prepared.input);
  }
  return {
    subjects,
    machine: `${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}`,
  };
}

const SHIPPED_RULES = [
  "no-referenced-severe-cve",
  "no-unfixable-vulnerability",
  "max-releases-behind-safest",
];

export function reportMarkdown(r: GateReport): string {
  const ok = r.subjects.filter((s) => !s.error);
  const lines = [
    `Machine: ${r.machine}. Advisories: the ${"`gate-corpus`"} sample of real GHSA records.`,
    "",
    `| subject | packages (production) | shipped verdict | severe referenced CVE | unfixable | ${RELEASE_THRESHOLDS.map((t) => `> ${t} behind`).join(" | ")} | furthest behind |`,
    `|---|---:|---|---:|---:|${RELEASE_THRESHOLDS.map(() => "---:").join("|")}|---|`,
  ];
  const cell = (s: GateSubjectResult, rule: string) =>
    s.shipped.findings[rule] === undefined ? "off" : String(s.shipped.findings[rule]);
  for (const s of r.subjects) {
    if (s.error) {
      lines.push(`| ${s.id} | error: ${s.error.replaceAll("|", "/").replaceAll("\n", " ")} |`);
      continue;
    }
    lines.push(
      `| ${s.id} | ${s.packages} (${s.production}) | ${s.shipped.verdict} | ${cell(s, "no-referenced-severe-cve")} | ${cell(s, "no-unfixable-vulnerability")} | ${RELEASE_THRESHOLDS.map((t) => s.releasesBehind[t] ?? 0).join(" | ")} | ${s.furthest ?? ""} |`,
    );
  }
  const failing = (pick: (s: GateSubjectResult) => boolean) => `${ok.filter(pick).length}/${ok.length}`;
  lines.push(
    `| **applications failing** | | ${failing((s) => s.shipped.verdict === "fail")} | ${failing((s) => (s.shipped.findings["no-referenced-severe-cve"] ?? 0) > 0)} | ${failing((s) => (s.shipped.findings["no-unfixable-vulnerability"] ?? 0) > 0)} | ${RELEASE_THRESHOLDS.map((t) => failing((s) => (s.releasesBehind[t] ?? 0) > 0)).join(" | ")} | |`,
  );
  const failed = ok.filter((s) => s.shipped.details.length > 0);
  if (failed.length > 0)
    lines.push(
      "",
      "Findings of the shipped gate:",
      "",
      ...failed.flatMap((s) => s.shipped.details.map((d) => `- ${s.id}: ${d}`)),
    );
  if (ok.some((s) => Object.keys(s.shipped.findings).some((k) => !SHIPPED_RULES.includes(k))))
    lines.push("", "(a rule outside the three kinds was enabled)");
  return lines.join("\n");
}

if (process.argv[1] === SELF) {
  const subjects = process.env.BENCH_GATE_SUBJECTS?.split(",").map((x) => x.trim());
  const report = await benchGateDefaults({
    ...(subjects ? { subjects } : {}),
    onSubject: (s) => process.stderr.write(`${JSON.stringify(s)}\n`),
  });
  process.stdout.write(`${reportMarkdown(report)}\n`);
}
