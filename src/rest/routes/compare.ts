import type { FastifyInstance } from "fastify";
import { compareAnalyses } from "../../store/compare.ts";
import { toUtcSeconds } from "../../store/insights.ts";
import { analysisAt, readableApplication } from "../authorization.ts";
import { REPLIED, type RestDeps, take } from "../context.ts";
import { paramSchemas, parseApplicationName, parseDateTime } from "../params.ts";
import { sendProblem } from "../problem.ts";
import { errorResponses } from "../schemas.ts";

export function compareRoutes(app: FastifyInstance, deps: RestDeps): void {
  app.get<{ Params: { name: string }; Querystring: Record<string, unknown> }>(
    "/rest/applications/:name/compare",
    {
      schema: {
        summary: "What changed between two analyses of an application",
        description:
          "`from` and `to` each select the latest analysis at or before that instant (`to` defaults to the latest " +
          "analysis). Added: in the `to` analysis only; removed: in the `from` analysis only.",
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
          },
          required: ["from"],
        },
        response: { 200: { $ref: "Comparison#" }, ...errorResponses },
      },
    },
    async (request, reply) => {
      const name = take(reply, parseApplicationName(request.params.name));
      if (name === REPLIED) return reply;
      const from = take(reply, parseDateTime(request.query.from, "from"));
      if (from === REPLIED) return reply;
      if (from === undefined) {
        return sendProblem(
          reply,
          400,
          "Query parameter 'from' is required: an ISO 8601 date-time such as 2024-03-01T00:00:00Z",
        );
      }
      const to = take(reply, parseDateTime(request.query.to, "to"));
      if (to === REPLIED) return reply;
      const application = await readableApplication(deps, request, reply, name);
      if (application === REPLIED) return reply;
      const fromAnalysis = await analysisAt(deps, reply, application, from, "from");
      if (fromAnalysis === REPLIED) return reply;
      const toAnalysis = await analysisAt(deps, reply, application, to, "to");
      if (toAnalysis === REPLIED) return reply;
      const comparison = await compareAnalyses(deps.db, application.id, fromAnalysis.seq, toAnalysis.seq);
      return {
        from: { dateTime: toUtcSeconds(fromAnalysis.analyzedAt) },
        ...comparison,
        to: { dateTime: toUtcSeconds(toAnalysis.analyzedAt) },
      };
    },
  );
}
