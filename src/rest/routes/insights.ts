import { finished } from "node:stream";
import type { FastifyInstance } from "fastify";
import { listCveInsights } from "../../store/insights.ts";
import { occurrencesPageForAnswer } from "../../store/read-task-runner.ts";
import { findVulnerability } from "../../store/vulnerabilities.ts";
import { analysisScope } from "../authorization.ts";
import type { AtDate, NameParams as Name, Paging, RestDeps } from "../context.ts";
import { paramSchemas } from "../params.ts";
import { errorResponses, pagingQuery } from "../schemas.ts";

type NameParams = { Params: Name; Querystring: Paging & AtDate & { severity: string[] } };
type CveParams = { Params: Name & { id: string }; Querystring: Paging & AtDate };

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
          "the application refers to (ordered by fullName then id).",
        tags: ["insights"],
        params: {
          type: "object",
          properties: {
            name: paramSchemas.applicationName,
            id: paramSchemas.cveReference,
          },
          required: ["name", "id"],
        },
        querystring: pagingQuery("packages", true),
        response: { 200: { type: "array", items: { $ref: "CvePackage#" } }, ...errorResponses },
      },
    },
    async (request, reply) => {
      const { limit, skip } = request.query;
      const scope = await analysisScope(deps, request);
      const vulnerability = await findVulnerability(deps.db, request.params.id);
      // A well-formed CVE the platform has no advisory for affects none of the application's packages.
      if (!vulnerability) return [];
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
}
