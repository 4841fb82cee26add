import type { FastifyInstance } from "fastify";
import { readableApplications } from "../../auth/principal.ts";
import { analysisHistory } from "../../store/analysis-history.ts";
import { countAnalysis, listAnalyses, listApplications } from "../../store/applications.ts";
import { toUtcSeconds } from "../../store/insights.ts";
import { applicationAt, readableApplication } from "../authorization.ts";
import type { AtDate, NameParams, Paging, RestDeps } from "../context.ts";
import { analysisPagingQuery, paramSchemas } from "../params.ts";
import { errorResponses } from "../schemas.ts";

export function applicationRoutes(app: FastifyInstance, deps: RestDeps): void {
  app.get<{ Querystring: Paging }>(
    "/rest/applications",
    {
      schema: {
        summary: "List the applications the caller may read",
        tags: ["applications"],
        querystring: {
          type: "object",
          properties: {
            limit: { type: "integer", minimum: 1, maximum: 1000, default: 100 },
            skip: { ...paramSchemas.skip, default: 0 },
          },
        },
        response: {
          200: { type: "array", items: { $ref: "ApplicationSummary#" } },
          400: errorResponses[400],
          401: errorResponses[401],
        },
      },
    },
    async (request) => {
      const { limit, skip } = request.query;
      const names = request.principal ? readableApplications(request.principal) : [];
      const rows = await listApplications(deps.db, { names, limit, skip });
      return rows.map((r) => ({
        analysisCount: r.analysisCount,
        demo: r.demo,
        description: r.description,
        latestAnalysis: r.latestAnalysisAt ? { dateTime: toUtcSeconds(r.latestAnalysisAt) } : null,
        name: r.name,
      }));
    },
  );

  app.get<{ Params: NameParams; Querystring: AtDate }>(
    "/rest/applications/:name",
    {
      schema: {
        summary: "An application: latest analysis, analysis history and counts",
        tags: ["applications"],
        params: { type: "object", properties: { name: paramSchemas.applicationName }, required: ["name"] },
        response: { 200: { $ref: "ApplicationDetail#" }, ...errorResponses },
      },
    },
    async (request) => {
      const found = await applicationAt(deps, { ...request, query: {} } as typeof request);
      const { application, analysis } = found;
      const analyses = await listAnalyses(deps.db, application.id);
      return {
        analyses: analyses.map((a) => ({ dateTime: toUtcSeconds(a.analyzedAt) })),
        counts: await countAnalysis(deps.db, application.id, analysis.seq),
        demo: application.demo,
        description: application.description,
        latestAnalysis: { dateTime: toUtcSeconds(analysis.analyzedAt) },
        name: application.name,
      };
    },
  );

  app.get<{ Params: NameParams; Querystring: Paging }>(
    "/rest/applications/:name/analyses",
    {
      schema: {
        summary: "Analysis history: each analysis with its counts and vulnerable packages by severity",
        description:
          "The analyses of the application, oldest first, each with the counts of GET /rest/applications/{name} " +
          "and its vulnerable package versions by the severity of the most severe CVE affecting each.",
        tags: ["applications"],
        params: { type: "object", properties: { name: paramSchemas.applicationName }, required: ["name"] },
        querystring: analysisPagingQuery,
        response: { 200: { type: "array", items: { $ref: "AnalysisHistoryEntry#" } }, ...errorResponses },
      },
    },
    async (request) => {
      const { limit, skip } = request.query;
      const application = await readableApplication(deps, request, request.params.name);
      const entries = await analysisHistory(deps.db, application.id, { limit, skip });
      return entries.map((e) => ({
        analysis: { dateTime: toUtcSeconds(e.analyzedAt) },
        counts: e.counts,
        vulnerablePackagesBySeverity: e.vulnerablePackagesBySeverity,
      }));
    },
  );
}
