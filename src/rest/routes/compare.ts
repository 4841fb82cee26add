import type { FastifyInstance } from "fastify";
import { compareAnalysesPage } from "../../store/compare.ts";
import { toUtcSeconds } from "../../store/insights.ts";
import { analysisAt, readableApplication } from "../authorization.ts";
import type { NameParams, Paging, RestDeps } from "../context.ts";
import { paramSchemas } from "../params.ts";
import { errorResponses } from "../schemas.ts";

/** Items of each list when `limit` is absent, as the other lists with an optional limit. */
const DEFAULT_LIMIT = 100;

export function compareRoutes(app: FastifyInstance, deps: RestDeps): void {
  app.get<{ Params: NameParams; Querystring: Paging & { from: string; to?: string | undefined } }>(
    "/rest/applications/:name/compare",
    {
      schema: {
        summary: "What changed between two analyses of an application",
        description:
          "`from` and `to` each select the latest analysis at or before that instant (`to` defaults to the latest " +
          "analysis). Added: in the `to` analysis only; removed: in the `from` analysis only. Each of the six " +
          "lists is paged alike: `skip` items are skipped and at most `limit` returned, in the list's order, and " +
          "`addedTotal`/`removedTotal` give the length of the whole lists.",
        tags: ["applications"],
        params: { type: "object", properties: { name: paramSchemas.applicationName }, required: ["name"] },
        querystring: {
          type: "object",
          properties: {
            from: { ...paramSchemas.dateTime, description: "ISO 8601 date-time of the baseline" },
            to: {
              ...paramSchemas.dateTime,
              description: "ISO 8601 date-time to compare with the baseline (default: the latest analysis)",
            },
            limit: {
              type: "integer",
              minimum: 1,
              maximum: 1000,
              default: DEFAULT_LIMIT,
              description: "Maximum number of items returned in each added/removed list",
            },
            skip: {
              ...paramSchemas.skip,
              default: 0,
              description: "Number of items of each added/removed list to skip first",
            },
          },
          required: ["from"],
        },
        response: { 200: { $ref: "Comparison#" }, ...errorResponses },
      },
    },
    async (request) => {
      const { limit, skip, from, to } = request.query;
      const application = await readableApplication(deps, request, request.params.name);
      const fromAnalysis = await analysisAt(deps, application, from, "from");
      const toAnalysis = await analysisAt(deps, application, to, "to");
      const comparison = await compareAnalysesPage(
        deps.db,
        application.id,
        fromAnalysis.seq,
        toAnalysis.seq,
        { limit, skip },
      );
      return {
        from: { dateTime: toUtcSeconds(fromAnalysis.analyzedAt) },
        ...comparison,
        to: { dateTime: toUtcSeconds(toAnalysis.analyzedAt) },
      };
    },
  );
}
