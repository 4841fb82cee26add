import type { FastifyInstance } from "fastify";
import type { Advisory } from "../../contracts/resources.ts";
import { advisoryImportState } from "../../store/advisories.ts";
import { advisoryDetail } from "../../store/vulnerabilities.ts";
import type { RestDeps } from "../context.ts";
import { paramSchemas } from "../params.ts";
import { errorResponses } from "../schemas.ts";
import { knownVulnerability } from "../unknown-vulnerability.ts";

/**
 * GET /rest/vulnerabilities/{id}: the advisory itself (summary, severity, score, affected ranges and
 * fixed versions, references), for any signed-in user: it says nothing about an application. An id no
 * imported record names is 404 of type unknown-vulnerability, as in the operations about one CVE.
 */
export function vulnerabilityRoutes(app: FastifyInstance, deps: RestDeps): void {
  app.get<{ Params: { id: string } }>(
    "/rest/vulnerabilities/:id",
    {
      schema: {
        summary: "A vulnerability as the imported advisories describe it",
        description:
          "The advisory listed under a CVE id (or found by a GHSA alias): summary, severity, CVSS score, the " +
          "affected packages with their version ranges and fixed versions, the references of its records, and " +
          "when advisories were last imported.",
        tags: ["insights"],
        params: {
          type: "object",
          properties: { id: paramSchemas.cveReference },
          required: ["id"],
        },
        response: {
          200: { $ref: "Advisory#" },
          400: errorResponses[400],
          401: errorResponses[401],
          404: {
            description:
              "No imported advisory names the id (type urn:imaging:problem:unknown-vulnerability, with " +
              "`vulnerability` and `advisoriesImportedAt`)",
            $ref: "Problem#",
          },
        },
      },
    },
    async (request): Promise<Advisory> => {
      const vulnerability = await knownVulnerability(deps.db, request.params.id);
      const detail = await advisoryDetail(deps.db, vulnerability.id);
      const { importedAt } = await advisoryImportState(deps.db);
      return {
        advisoriesImportedAt: importedAt,
        affected: detail.packages.map((p) => ({
          ecosystem: p.ecosystem as Advisory["affected"][number]["ecosystem"],
          fixedVersions: [...new Set(p.ranges.flatMap((r) => (r.fixed ? [r.fixed] : [])))],
          name: p.name,
          ranges: p.ranges.map((r) => ({
            fixed: r.fixed,
            introduced: r.introduced,
            lastAffected: r.lastAffected,
            limit: r.limit,
            version: r.version,
          })),
        })),
        aliases: vulnerability.aliases,
        id: vulnerability.cveId,
        modifiedAt: detail.modifiedAt,
        publishedAt: vulnerability.publishedAt,
        records: detail.records,
        references: detail.references,
        score: vulnerability.cvssScore,
        severity: vulnerability.severity as Advisory["severity"],
        summary: vulnerability.summary,
      };
    },
  );
}
