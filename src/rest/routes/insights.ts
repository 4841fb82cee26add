import { finished } from "node:stream";
import type { FastifyInstance } from "fastify";
import { listAnalyses } from "../../store/applications.ts";
import { listCveInsights, toUtcSeconds } from "../../store/insights.ts";
import { occurrencesPageForAnswer } from "../../store/read-task-runner.ts";
import { countAffectedPackages, lastAffectedSeq } from "../../store/vulnerabilities.ts";
import { analysisScope, applicationAt } from "../authorization.ts";
import type { AtDate, NameParams as Name, Paging, RestDeps } from "../context.ts";
import { paramSchemas } from "../params.ts";
import { cveErrorResponses, errorResponses, pagingQuery } from "../schemas.ts";
import { knownVulnerability } from "../unknown-vulnerability.ts";

type NameParams = { Params: Name; Querystring: Paging & AtDate & { severity: string[] } };
type CveParams = { Params: Name & { id: string }; Querystring: Paging & AtDate };
type CveAtParams = { Params: Name & { id: string }; Querystring: AtDate };

const cveParams = {
  type: "object",
  properties: {
    name: paramSchemas.applicationName,
    id: paramSchemas.cveReference,
  },
  required: ["name", "id"],
} as const;

export function insightRoutes(app: FastifyInstance, deps: RestDeps): void {
  app.get<NameParams>(
    "/rest/applications/:name/insights/cve",
    {
      schema: {
        summary: "CVEs affecting an application, most severe first",
        tags: ["insights"],
        params: { type: "object", properties: { name: paramSchemas.applicationName }, required: ["name"] },
        querystring: {
          ...pagingQuery("CVEs", true),
          properties: {
            ...pagingQuery("CVEs", true).properties,
            severity: paramSchemas.severities,
          },
        },
        response: { 200: { type: "array", items: { $ref: "CveInsight#" } }, ...errorResponses },
      },
    },
    async (request) => {
      const { limit, skip, severity: severities } = request.query;
      const scope = await analysisScope(deps, request);
      return listCveInsights(deps.db, {
        ...scope,
        limit,
        skip,
        severities,
      });
    },
  );

  app.get<CveParams>(
    "/rest/applications/:name/insights/cve/:id/occurrences",
    {
      schema: {
        summary: "Impacted packages for a CVE, with their external objects",
        description:
          "Lists the application's packages affected by the CVE (or its GHSA alias) as of the latest analysis " +
          "at or before `date`, ordered by name then version, each with the external objects of that package " +
          "the application refers to (ordered by fullName then id). An empty list means the analysis uses no " +
          "affected version; a CVE no imported advisory names is answered 404 (unknown vulnerability).",
        tags: ["insights"],
        params: cveParams,
        querystring: pagingQuery("packages", true),
        response: { 200: { type: "array", items: { $ref: "CvePackage#" } }, ...cveErrorResponses },
      },
    },
    async (request, reply) => {
      const { limit, skip } = request.query;
      const scope = await analysisScope(deps, request);
      // A CVE no imported advisory names is unknown (404), never "affects nothing" ([]).
      const vulnerability = await knownVulnerability(deps.db, request.params.id);
      // Already JSON (the read model's objects spliced as stored), assembled by a reader thread on SQLite:
      // sent as it is, not through the schema's serializer.
      const page = await occurrencesPageForAnswer(deps.db, {
        ...scope,
        vulnerabilityId: vulnerability.id,
        limit,
        skip,
      });
      reply.type("application/json; charset=utf-8");
      if (typeof page === "string") return reply.send(page);
      // The reader's buffer is read until the answer is written (or compressed) in full, or abandoned;
      // `finished` also calls back for a client gone while the page was read (its "close" already past).
      finished(reply.raw, () => page.release());
      return reply.send(page.bytes);
    },
  );

  app.get<CveAtParams>(
    "/rest/applications/:name/insights/cve/:id",
    {
      schema: {
        summary: "Whether an analysis is affected by a CVE, and the last analysis that was",
        description:
          "For the latest analysis at or before `date`: how many package versions in use the CVE (or its GHSA " +
          "alias) affects, and the newest analysis up to this one that used an affected version, so that an " +
          "analysis no longer affected says when it last was.",
        tags: ["insights"],
        params: cveParams,
        querystring: {
          type: "object",
          properties: { date: pagingQuery("packages", false).properties.date },
        },
        response: { 200: { $ref: "CveInApplication#" }, ...cveErrorResponses },
      },
    },
    async (request) => {
      const { application, analysis } = await applicationAt(deps, request);
      const vulnerability = await knownVulnerability(deps.db, request.params.id);
      const last = await lastAffectedSeq(deps.db, application.id, vulnerability.id, analysis.seq);
      const lastAnalysis =
        last === undefined
          ? undefined
          : last === analysis.seq
            ? analysis
            : (await listAnalyses(deps.db, application.id)).find((a) => a.seq === last);
      const affected = await countAffectedPackages(deps.db, application.id, vulnerability.id, analysis.seq);
      return {
        affectedPackageCount: affected,
        analysis: { dateTime: toUtcSeconds(analysis.analyzedAt) },
        id: vulnerability.cveId,
        lastAffectedAnalysis: lastAnalysis ? { dateTime: toUtcSeconds(lastAnalysis.analyzedAt) } : null,
      };
    },
  );
}
