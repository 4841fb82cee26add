import type { FastifyInstance } from "fastify";
import { compareAnalysesPage } from "../../store/compare.ts";
import { toUtcSeconds } from "../../store/insights.ts";
import { analysisAt, readableApplication } from "../authorization.ts";
import { type RestDeps, take } from "../context.ts";
import { readPaging } from "../paging.ts";
import { paramSchemas, parseApplicationName, parseDateTime } from "../params.ts";
import { refuse } from "../problem.ts";
import { errorResponses } from "../schemas.ts";

/** Items of each list when `limit` is absent, as the other lists with an optional limit. */
const DEFAULT_LIMIT = 100;

export function compareRoutes(app: FastifyInstance, deps: RestDeps): void {
  app.get<{ Params: { name: string }; Querystring: Record<string, unknown> }>(
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
      const paging = readPaging(request.query, DEFAULT_LIMIT);
      const name = take(parseApplicationName(request.params.name));
      const from = take(parseDateTime(request.query.from, "from"));
      if (from === undefined) {
        return refuse(
          400,
          "Query parameter 'from' is required: an ISO 8601 date-time such as 2024-03-01T00:00:00Z",
        );
      }
      const to = take(parseDateTime(request.query.to, "to"));
      const application = await readableApplication(deps, request, name);
      const fromAnalysis = await analysisAt(deps, application, from, "from");
      const toAnalysis = await analysisAt(deps, application, to, "to");
      const comparison = await compareAnalysesPage(
        deps.db,
        application.id,
        fromAnalysis.seq,
        toAnalysis.seq,
        paging,
      );
      return {
        from: { dateTime: toUtcSeconds(fromAnalysis.analyzedAt) },
        ...comparison,
        to: { dateTime: toUtcSeconds(toAnalysis.analyzedAt) },
      };
    },
  );
}
