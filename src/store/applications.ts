/** Applications and their analyses: lookup, listing, the analysis a `date` selects, and its counts. */
import { type Kysely, sql } from "kysely";
import { preparedQuery } from "./prepared-query.ts";
import type { Database } from "./schema.ts";
import { liveAt } from "./sql-helpers.ts";

export interface ApplicationRow {
  id: number;
  name: string;
  description: string;
  demo: boolean;
}

export interface AnalysisRef {
  seq: number;
  analyzedAt: string;
}

interface ApplicationSummary {
  name: string;
  description: string;
  demo: boolean;
  analysisCount: number;
  latestAnalysisAt: string | null;
}

type Db = Kysely<Database>;

/** The applications listing, compiled once (an MCP tool's hot read): all of them, or those named. */
const applicationsPage = (db: Db, limit: number, skip: number) =>
  db
    .selectFrom("applications as a")
    .leftJoin("analyses as an", "an.application_id", "a.id")
    .select((eb) => [
      "a.name",
      "a.description",
      "a.demo",
      eb.fn.count<number>("an.id").as("analysis_count"),
      eb.fn.max("an.analyzed_at").as("latest"),
    ])
    .groupBy(["a.id", "a.name", "a.description", "a.demo"])
    .orderBy("a.name")
    .limit(limit)
    .offset(skip);
const allApplications = preparedQuery(applicationsPage);
const namedApplications = preparedQuery((db: Db, names: readonly string[], limit: number, skip: number) =>
  applicationsPage(db, limit, skip).where("a.name", "in", names),
);

export async function listApplications(
  db: Db,
  options: { names: readonly string[] | null; limit: number; skip: number },
): Promise<ApplicationSummary[]> {
  const { names, limit, skip } = options;
  if (names && names.length === 0) return [];
  const rows = names
    ? await namedApplications(db, names, limit, skip)
    : await allApplications(db, limit, skip);
  return rows.map((r) => ({
    name: r.name,
    description: r.description,
    demo: Number(r.demo) === 1,
    analysisCount: Number(r.analysis_count),
    latestAnalysisAt: (r.latest as string | null) ?? null,
  }));
}

// The per-application reads every REST call about an application (and so every such tool call) makes,
// compiled once (prepared-query.ts).
const applicationNamed = preparedQuery((db: Db, name: string) =>
  db.selectFrom("applications").select(["id", "name", "description", "demo"]).where("name", "=", name),
);
const newestAnalysis = preparedQuery((db: Db, applicationId: number) =>
  db
    .selectFrom("analyses")
    .select("analyzed_at")
    .where("application_id", "=", applicationId)
    .orderBy("seq", "desc")
    .limit(1),
);
const analysesOf = preparedQuery((db: Db, applicationId: number) =>
  db
    .selectFrom("analyses")
    .select(["seq", "analyzed_at"])
    .where("application_id", "=", applicationId)
    .orderBy("seq"),
);
const latestAnalysis = (db: Db, applicationId: number) =>
  db
    .selectFrom("analyses")
    .select(["seq", "analyzed_at"])
    .where("application_id", "=", applicationId)
    .orderBy("analyzed_at", "desc")
    .limit(1);
const analysisNow = preparedQuery(latestAnalysis);
const analysisAsOf = preparedQuery((db: Db, applicationId: number, date: string) =>
  latestAnalysis(db, applicationId).where("analyzed_at", "<=", date),
);

export async function findApplication(db: Db, name: string): Promise<ApplicationRow | undefined> {
  const [row] = await applicationNamed(db, name);
  return row && { ...row, demo: row.demo === 1 };
}

/** When the application's newest analysis was made (as stored, ISO 8601), undefined before its first. */
export async function latestAnalyzedAt(db: Db, applicationId: number): Promise<string | undefined> {
  const [latest] = await newestAnalysis(db, applicationId);
  return latest?.analyzed_at;
}

export async function listAnalyses(db: Db, applicationId: number): Promise<AnalysisRef[]> {
  const rows = await analysesOf(db, applicationId);
  return rows.map((r) => ({ seq: r.seq, analyzedAt: r.analyzed_at }));
}

/** The latest analysis at or before `date` (an ISO instant), or the latest one without a date. */
export async function resolveAnalysis(
  db: Db,
  applicationId: number,
  date?: string,
): Promise<AnalysisRef | undefined> {
  const [row] = date ? await analysisAsOf(db, applicationId, date) : await analysisNow(db, applicationId);
  return row && { seq: row.seq, analyzedAt: row.analyzed_at };
}

interface AnalysisCounts {
  packages: number;
  vulnerablePackages: number;
  vulnerabilities: number;
  externalObjects: number;
  references: number;
}

export async function countAnalysis(db: Db, applicationId: number, seq: number): Promise<AnalysisCounts> {
  const count = async (table: "application_packages" | "external_objects" | "object_references") => {
    const { rows } = await sql<{ n: number }>`select count(*) as n from ${sql.table(table)}
      where application_id = ${applicationId} and from_seq <= ${seq} and to_seq > ${seq}`.execute(db);
    return Number(rows[0]?.n ?? 0);
  };
  const vulnerable = await db
    .selectFrom("application_packages as ap")
    .innerJoin("version_vulnerabilities as vv", "vv.package_version_id", "ap.package_version_id")
    .select((eb) => [
      eb.fn.count<number>("ap.package_version_id").distinct().as("packages"),
      eb.fn.count<number>("vv.vulnerability_id").distinct().as("vulnerabilities"),
    ])
    .where("ap.application_id", "=", applicationId)
    .where(liveAt("ap", seq))
    .executeTakeFirstOrThrow();
  return {
    packages: await count("application_packages"),
    vulnerablePackages: Number(vulnerable.packages),
    vulnerabilities: Number(vulnerable.vulnerabilities),
    externalObjects: await count("external_objects"),
    references: await count("object_references"),
  };
}
