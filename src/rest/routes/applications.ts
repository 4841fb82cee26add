import type { FastifyInstance } from "fastify";
import { readableApplications } from "../../auth/principal.ts";
import { countAnalysis, listAnalyses, listApplications, toUtcSeconds } from "../../store/insights.ts";
import { applicationAt, REPLIED, type RestDeps, take } from "../context.ts";
import { paramSchemas, parseLimit, parseSkip } from "../params.ts";
import { errorResponses } from "../schemas.ts";

export function applicationRoutes(app: FastifyInstance, deps: RestDeps): void {
  app.get<{ Querystring: Record<string, unknown> }>(
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
    async (request, reply) => {
      const limit = take(reply, parseLimit(request.query.limit, { required: false, fallback: 100 }));
      if (limit === REPLIED) return reply;
      const skip = take(reply, parseSkip(request.query.skip));
      if (skip === REPLIED) return reply;
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

  app.get<{ Params: { name: string }; Querystring: Record<string, unknown> }>(
    "/rest/applications/:name",
    {
      schema: {
        summary: "An application: latest analysis, analysis history and counts",
        tags: ["applications"],
        params: { type: "object", properties: { name: paramSchemas.applicationName }, required: ["name"] },
        response: { 200: { $ref: "ApplicationDetail#" }, ...errorResponses },
      },
    },
    async (request, reply) => {
      const found = await applicationAt(deps, { ...request, query: {} } as typeof request, reply);
      if (found === REPLIED) return reply;
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
}
