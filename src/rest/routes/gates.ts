import type { FastifyInstance, FastifyRequest } from "fastify";
import {
  effectiveRule,
  type GateRule,
  mergeGateParameters,
  parametersOfSomeKind,
} from "../../domain/gate-kinds.ts";
import { evaluateAnalysis, gateHistory } from "../../domain/gates.ts";
import { findGateRule, listGateRules, updateGateRule } from "../../store/gates.ts";
import { toUtcSeconds } from "../../store/insights.ts";
import { adminOnly, applicationAt, readableApplication } from "../authorization.ts";
import type { BodyOf } from "../body.ts";
import type { AtDate, NameParams as Name, Paging, RestDeps } from "../context.ts";
import { gateRuleUpdateBody } from "../gate-schemas.ts";
import { analysisPagingQuery, paramSchemas } from "../params.ts";
import { refuse } from "../problem.ts";
import { errorResponses } from "../schemas.ts";

type NameParams = { Params: Name; Querystring: Paging & AtDate };

const nameParams = {
  type: "object",
  properties: { name: paramSchemas.applicationName },
  required: ["name"],
} as const;

export function gateRoutes(app: FastifyInstance, deps: RestDeps): void {
  /** The rule a PUT names, found before its body is judged: an unknown rule is 404 whatever the body. */
  const ruleOfRequest = new WeakMap<FastifyRequest, GateRule>();
  const knownRule = async (request: FastifyRequest<{ Params: { id: string } }>): Promise<void> => {
    const rule = await findGateRule(deps.db, request.params.id);
    if (!rule) refuse(404, `No quality gate rule with id '${request.params.id}'`);
    ruleOfRequest.set(request, effectiveRule(rule));
  };

  app.get(
    "/rest/gates",
    {
      schema: {
        summary: "Quality gate rules, ordered by id",
        tags: ["gates"],
        response: {
          200: { type: "array", items: { $ref: "GateRule#" } },
          401: errorResponses[401],
        },
      },
    },
    async () => (await listGateRules(deps.db)).map(effectiveRule),
  );

  app.put<{ Params: { id: string }; Body: BodyOf<typeof gateRuleUpdateBody> }>(
    "/rest/gates/:id",
    {
      onRequest: adminOnly("quality gate rules"),
      preValidation: knownRule,
      schema: {
        summary: "Enable, disable or configure a quality gate rule (administrators)",
        description:
          "`parameters` are merged into the rule's current ones; each key must be one the rule's kind takes, " +
          "with a value of the expected type. Returns the updated rule.",
        tags: ["gates"],
        params: {
          type: "object",
          properties: {
            id: { ...paramSchemas.gateRuleId, description: "Rule id, e.g. no-referenced-severe-cve" },
          },
          required: ["id"],
        },
        body: gateRuleUpdateBody,
        response: {
          200: { $ref: "GateRule#" },
          400: { description: "Invalid rule id or body", $ref: "Problem#" },
          401: errorResponses[401],
          403: { description: "The caller is not an administrator", $ref: "Problem#" },
          404: { description: "No rule with this id", $ref: "Problem#" },
          409: { description: "Parameters of another kind than the rule's", $ref: "Problem#" },
        },
      },
    },
    async (request) => {
      const { id } = request.params;
      const rule = ruleOfRequest.get(request);
      if (!rule) return refuse(404, `No quality gate rule with id '${id}'`);
      const update = request.body;
      let parameters: Record<string, unknown> | undefined;
      if (update.parameters !== undefined) {
        const merged = mergeGateParameters(rule.kind, rule.parameters, update.parameters);
        if (!merged.ok) {
          // Valid parameters of another kind conflict with this rule's kind; anything else is malformed.
          const status = parametersOfSomeKind(update.parameters) ? 409 : 400;
          return refuse(status, merged.detail);
        }
        parameters = merged.value;
      }
      const subject = request.principal?.subject ?? "";
      const updated = await updateGateRule(deps.db, id, { enabled: update.enabled, parameters }, subject);
      return updated && effectiveRule(updated);
    },
  );

  app.get<NameParams>(
    "/rest/applications/:name/gates/evaluation",
    {
      schema: {
        summary: "Evaluate the enabled quality gate rules on an analysis",
        description:
          "Evaluates the enabled rules on the latest analysis at or before `date`. The verdict is fail when any " +
          "rule has a finding. Each rule lists its findings skip..skip+limit and counts them all in " +
          "`findingsTotal`.",
        tags: ["gates"],
        params: nameParams,
        querystring: {
          type: "object",
          properties: {
            date: {
              ...paramSchemas.dateTime,
              description:
                "ISO 8601 date-time: evaluate the latest analysis at or before it (default: latest)",
            },
            limit: {
              type: "integer",
              minimum: 1,
              maximum: 1000,
              default: 100,
              description: "Maximum number of findings listed per rule",
            },
            skip: {
              ...paramSchemas.skip,
              default: 0,
              description: "Number of findings of each rule to skip first",
            },
          },
        },
        response: { 200: { $ref: "GateEvaluation#" }, ...errorResponses },
      },
    },
    async (request) => {
      const { limit, skip } = request.query;
      const found = await applicationAt(deps, request);
      const evaluation = await evaluateAnalysis(deps.db, found.application.id, found.analysis.seq, {
        limit,
        skip,
      });
      return {
        analysis: { dateTime: toUtcSeconds(found.analysis.analyzedAt) },
        application: found.application.name,
        ...evaluation,
      };
    },
  );

  app.get<NameParams>(
    "/rest/applications/:name/gates/history",
    {
      schema: {
        summary: "Quality gate verdict of each analysis, newest first",
        tags: ["gates"],
        params: nameParams,
        querystring: analysisPagingQuery,
        response: { 200: { type: "array", items: { $ref: "GateHistoryEntry#" } }, ...errorResponses },
      },
    },
    async (request) => {
      const { limit, skip } = request.query;
      const application = await readableApplication(deps, request, request.params.name);
      const entries = await gateHistory(deps.db, application.id, { limit, skip });
      return entries.map((e) => ({
        analysis: { dateTime: toUtcSeconds(e.analyzedAt) },
        failedRules: e.failedRules,
        verdict: e.verdict,
      }));
    },
  );
}
