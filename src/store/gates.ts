import { type Kysely, sql } from "kysely";
import type {
  ExternalObject,
  GateEvaluation as GateEvaluationAnswer,
  GateHistoryEntry as GateHistoryAnswer,
  GateRuleResult,
} from "../contracts/resources.ts";
import { EXTERNAL_OBJECT_COLUMNS, toExternalObject } from "./external-objects.ts";
import type { GateFinding, GateVerdict, PackageInterval, ReferenceInterval } from "./gate-records.ts";
import { vulnerabilitiesOfVersions } from "./packages.ts";
import type { Database, GateRulesTable } from "./schema.ts";
import { liveAt, liveWithin, referredAt } from "./sql-helpers.ts";

type Db = Kysely<Database>;

/** At most this many referred objects are listed with a finding. */
const FINDING_OBJECTS_MAX = 20;

/** A quality gate rule as stored; its parameters as written (domain/gate-kinds.ts reads them). */
export interface StoredGateRule {
  description: string;
  enabled: boolean;
  id: string;
  kind: string;
  name: string;
  parameters: Record<string, unknown>;
}

function toRule(row: GateRulesTable): StoredGateRule {
  let stored: unknown = {};
  try {
    stored = JSON.parse(row.parameters);
  } catch {
    stored = {};
  }
  return {
    description: row.description,
    enabled: Number(row.enabled) === 1,
    id: row.id,
    kind: row.kind,
    name: row.name,
    parameters:
      typeof stored === "object" && stored !== null && !Array.isArray(stored)
        ? (stored as Record<string, unknown>)
        : {},
  };
}

/** Every quality gate rule, ordered by id. */
export async function listGateRules(db: Db): Promise<StoredGateRule[]> {
  const rows = await db.selectFrom("gate_rules").selectAll().orderBy("id").execute();
  return rows.map(toRule);
}

export async function findGateRule(db: Db, id: string): Promise<StoredGateRule | undefined> {
  const row = await db.selectFrom("gate_rules").selectAll().where("id", "=", id).executeTakeFirst();
  return row && toRule(row);
}

/** Changes whether a rule is enabled and/or its (already validated) parameters; returns the rule. */
export async function updateGateRule(
  db: Db,
  id: string,
  change: { enabled?: boolean | undefined; parameters?: Record<string, unknown> | undefined },
  by: string,
): Promise<StoredGateRule | undefined> {
  await db
    .updateTable("gate_rules")
    .set({
      ...(change.enabled === undefined ? {} : { enabled: change.enabled ? 1 : 0 }),
      ...(change.parameters === undefined ? {} : { parameters: JSON.stringify(change.parameters) }),
      updated_at: new Date().toISOString(),
      updated_by: by,
    })
    .where("id", "=", id)
    .execute();
  return findGateRule(db, id);
}

/**
 * The packages used by an application in any analysis of lo..hi (inclusive), with the facts the rules
 * read and the intervals of their references, so each analysis is evaluated without a snapshot.
 */
export async function gateInputs(
  db: Db,
  applicationId: number,
  lo: number,
  hi: number,
): Promise<{ packages: PackageInterval[]; references: ReferenceInterval[] }> {
  const rows = await db
    .selectFrom("application_packages as ap")
    .innerJoin("package_versions as pv", "pv.id", "ap.package_version_id")
    .innerJoin("packages as p", "p.id", "pv.package_id")
    .leftJoin("package_versions as sv", (join) =>
      join.onRef("sv.package_id", "=", "p.id").onRef("sv.version", "=", "p.safest_version"),
    )
    .select((eb) => [
      "ap.from_seq",
      "ap.to_seq",
      "ap.scope",
      "pv.id as version_id",
      "p.id as package_id",
      "p.name",
      "pv.version",
      "pv.safer_closest_version",
      "p.safest_version",
      "sv.rank as safest_rank",
      eb
        .selectFrom("package_versions as v")
        .select(sql<number>`count(distinct v.rank)`.as("n"))
        .whereRef("v.package_id", "=", "p.id")
        .where("v.published", "=", 1)
        .where("v.prerelease", "=", 0)
        .whereRef("v.rank", ">", "pv.rank")
        .whereRef("v.rank", "<=", "sv.rank")
        .as("behind"),
    ])
    .where("ap.application_id", "=", applicationId)
    .where(liveWithin("ap", lo, hi))
    .orderBy("p.name")
    .orderBy("p.ecosystem")
    .orderBy("pv.rank")
    .orderBy("pv.version")
    .execute();
  const vulnerabilities = await vulnerabilitiesOfVersions(
    db,
    rows.map((r) => r.version_id),
  );
  const packages = rows.map((r) => ({
    fromSeq: r.from_seq,
    toSeq: r.to_seq,
    packageId: r.package_id,
    versionId: r.version_id,
    name: r.name,
    version: r.version,
    scope: r.scope,
    saferClosestVersion: r.safer_closest_version,
    safestVersion: r.safest_version,
    releasesBehind: r.safest_rank === null ? null : Number(r.behind ?? 0),
    vulnerabilities: vulnerabilities.get(r.version_id) ?? [],
  }));

  // Only whether a vulnerable version is referred matters to the rules (its own objects: the ones the
  // referring code loads).
  const vulnerable = [
    ...new Set(packages.filter((p) => p.vulnerabilities.length > 0).map((p) => p.versionId)),
  ];
  const references: ReferenceInterval[] = [];
  for (let i = 0; i < vulnerable.length; i += 500) {
    const spans = await db
      .selectFrom("object_references as r")
      .innerJoin("external_objects as eo", "eo.id", "r.target_id")
      .select([
        "eo.package_version_id",
        "r.from_seq",
        "r.to_seq",
        "eo.from_seq as object_from_seq",
        "eo.to_seq as object_to_seq",
      ])
      .distinct()
      .where("r.application_id", "=", applicationId)
      .where("eo.package_version_id", "in", vulnerable.slice(i, i + 500))
      .where(liveWithin("r", lo, hi))
      .where(liveWithin("eo", lo, hi))
      .execute();
    for (const s of spans) {
      references.push({
        versionId: s.package_version_id,
        fromSeq: Math.max(s.from_seq, s.object_from_seq),
        toSeq: Math.min(s.to_seq, s.object_to_seq),
      });
    }
  }
  return { packages, references };
}

/** The REST resource without what the route adds (the application and the analysis). */
export type GateEvaluation = Pick<GateEvaluationAnswer, "rules" | "verdict">;

type RuleSummary = Omit<GateRuleResult, "findings">;

/** What `gate_evaluations.doc` holds: the outcomes without their findings (rows of gate_findings). */
interface StoredSummary {
  rules: RuleSummary[];
  verdict: GateEvaluation["verdict"];
}

/** A page of each rule's findings, with the rule's outcome. */
export interface PagedOutcomes {
  rules: (RuleSummary & { findings: GateFinding[] })[];
  verdict: GateEvaluation["verdict"];
}

export type Paging = { limit: number; skip: number } | undefined;

/**
 * The stored outcomes of analysis `seq` with a page of each rule's findings, if stored at the current
 * `gate_facts_generation` (triggers bump it on any write to gate rules, packages, versions or
 * vulnerabilities: migration 017); otherwise the generation read, under which a verdict computed now
 * may be stored. Reading the generation first means a stored verdict is never older than its
 * generation; a write in between only costs a recomputation. The outcomes are one small document and
 * the findings rows of `gate_findings` (migration 019), so a page reads only its rows.
 */
export async function readStoredOutcomes(
  db: Db,
  applicationId: number,
  seq: number,
  paging: Paging,
): Promise<{ generation: number; outcomes?: PagedOutcomes }> {
  const { value } = await db
    .selectFrom("gate_facts_generation")
    .select("value")
    .where("id", "=", 1)
    .executeTakeFirstOrThrow();
  const generation = Number(value);
  const stored = await db
    .selectFrom("gate_evaluations")
    .select(["generation", "doc"])
    .where("application_id", "=", applicationId)
    .where("seq", "=", seq)
    .executeTakeFirst();
  if (!stored || Number(stored.generation) !== generation) return { generation };
  const summary = JSON.parse(stored.doc) as StoredSummary;
  const pages = await storedFindings(db, applicationId, seq, generation, summary, paging);
  // Rows missing: a recomputation at a newer generation replaced them after the summary was read.
  if (!pages) return { generation };
  return {
    generation,
    outcomes: {
      rules: summary.rules.map((r, i) => ({ ...r, findings: pages[i] ?? [] })),
      verdict: summary.verdict,
    },
  };
}

/** Each rule's findings skip..skip+limit (all without paging) from one key range walk, or undefined if incomplete. */
async function storedFindings(
  db: Db,
  applicationId: number,
  seq: number,
  generation: number,
  summary: StoredSummary,
  paging: Paging,
): Promise<GateFinding[][] | undefined> {
  const skip = paging?.skip ?? 0;
  const expected = summary.rules.map((r) =>
    Math.max(0, Math.min(r.findingsTotal, paging ? skip + paging.limit : r.findingsTotal) - skip),
  );
  const wanted = summary.rules.filter((_, i) => (expected[i] ?? 0) > 0).map((r) => r.id);
  const pages = summary.rules.map((): GateFinding[] => []);
  if (wanted.length === 0) return pages;
  let query = db
    .selectFrom("gate_findings")
    .select(["rule_id", "doc"])
    .where("application_id", "=", applicationId)
    .where("seq", "=", seq)
    .where("generation", "=", generation)
    .where("rule_id", "in", wanted)
    .where("position", ">=", skip);
  if (paging) query = query.where("position", "<", skip + paging.limit);
  const rows = await query.orderBy("rule_id").orderBy("position").execute();
  const index = new Map(summary.rules.map((r, i) => [r.id, i]));
  for (const row of rows) pages[index.get(row.rule_id) ?? -1]?.push(JSON.parse(row.doc) as GateFinding);
  return pages.every((page, i) => page.length === expected[i]) ? pages : undefined;
}

/** Stores a computed verdict under `generation`: its outcomes, its findings as rows, older rows dropped. */
export async function storeVerdict(
  db: Db,
  applicationId: number,
  seq: number,
  generation: number,
  verdict: GateVerdict,
): Promise<void> {
  const summary: StoredSummary = {
    rules: verdict.rules.map((r) => ({
      findingsTotal: r.findings.length,
      id: r.id,
      name: r.name,
      passed: r.passed,
    })),
    verdict: verdict.verdict,
  };
  const rows = verdict.rules.flatMap((r) =>
    r.findings.map((f, position) => ({
      application_id: applicationId,
      seq,
      generation,
      rule_id: r.id,
      position,
      doc: JSON.stringify(f),
    })),
  );
  const write = async (trx: Db) => {
    await trx
      .deleteFrom("gate_findings")
      .where("application_id", "=", applicationId)
      .where("seq", "=", seq)
      .where("generation", "<", generation)
      .execute();
    // Two readers may compute the same generation at once: the rows are the same, the first wins.
    for (let i = 0; i < rows.length; i += 1_000) {
      await trx
        .insertInto("gate_findings")
        .values(rows.slice(i, i + 1_000))
        .onConflict((oc) => oc.doNothing())
        .execute();
    }
    const doc = JSON.stringify(summary);
    await trx
      .insertInto("gate_evaluations")
      .values({ application_id: applicationId, seq, generation, doc })
      .onConflict((oc) => oc.columns(["application_id", "seq"]).doUpdateSet({ generation, doc }))
      .execute();
  };
  if (db.isTransaction) await write(db);
  else await db.transaction().execute(write);
}

/** The REST resource with the analysis' instant as stored (the route makes it a DateTime). */
export type GateHistoryEntry = Omit<GateHistoryAnswer, "analysis"> & { analyzedAt: string };

/** The analyses of a page of the gate history, newest first. */
export function historyAnalyses(db: Db, applicationId: number, paging: { limit: number; skip: number }) {
  return db
    .selectFrom("analyses")
    .select(["seq", "analyzed_at"])
    .where("application_id", "=", applicationId)
    .orderBy("seq", "desc")
    .limit(paging.limit)
    .offset(paging.skip)
    .execute();
}

/**
 * Up to 20 referred objects of each package version, in fullName order: one statement for all of them (a
 * UNION ALL of one bounded index walk per version's package), as a page lists up to 100 packages per rule.
 */
export async function referredObjectsSamples(
  db: Db,
  applicationId: number,
  seq: number,
  versionIds: readonly number[],
): Promise<Map<number, ExternalObject[]>> {
  const samples = new Map<number, ExternalObject[]>();
  const packageOf = new Map<number, number>();
  for (let i = 0; i < versionIds.length; i += 500) {
    const rows = await db
      .selectFrom("package_versions")
      .select(["id", "package_id"])
      .where("id", "in", versionIds.slice(i, i + 500))
      .execute();
    for (const r of rows) packageOf.set(r.id, r.package_id);
  }
  const walk = (versionId: number) =>
    db
      .selectFrom((eb) =>
        eb
          .selectFrom("external_objects as eo")
          .select(["eo.package_version_id", ...EXTERNAL_OBJECT_COLUMNS])
          .where("eo.application_id", "=", applicationId)
          // The package's objects in page order (external_objects_by_package), this version's kept.
          .where("eo.package_id", "=", packageOf.get(versionId) ?? -1)
          .where("eo.package_version_id", "=", versionId)
          .where(liveAt("eo", seq))
          .where(referredAt("eo", seq))
          .orderBy("eo.full_name")
          .orderBy("eo.object_id")
          .limit(FINDING_OBJECTS_MAX)
          .as("sample"),
      )
      .selectAll();
  for (let i = 0; i < versionIds.length; i += 100) {
    const [first, ...rest] = versionIds.slice(i, i + 100);
    if (first === undefined) break;
    let query = walk(first);
    for (const versionId of rest) query = query.unionAll(walk(versionId));
    for (const r of await query.execute()) {
      const list = samples.get(r.package_version_id) ?? [];
      list.push(toExternalObject(r));
      samples.set(r.package_version_id, list);
    }
  }
  // SQL promises no order for a UNION ALL: each sample is put back in the stores' (byte) order.
  const bytes = (text: string) => Buffer.from(text, "utf8");
  for (const list of samples.values()) {
    list.sort(
      (a, b) =>
        Buffer.compare(bytes(a.fullName), bytes(b.fullName)) || Buffer.compare(bytes(a.id), bytes(b.id)),
    );
  }
  return samples;
}
