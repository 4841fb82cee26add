import type { FastifyInstance } from "fastify";
import { toUtcSeconds } from "../../store/insights.ts";
import {
  findUsedPackages,
  listInteractions,
  listPackages,
  searchExternalObjects,
} from "../../store/packages.ts";
import { analysisScope, applicationAt } from "../authorization.ts";
import type { AtDate, NameParams as Name, Paging, RestDeps } from "../context.ts";
import { ECOSYSTEMS, paramSchemas } from "../params.ts";
import { refuse } from "../problem.ts";
import { errorResponses, pagingQuery } from "../schemas.ts";
import { SEARCH_PURPOSE } from "../validation.ts";

type NameParams<Query> = { Params: Name; Querystring: Paging & AtDate & Query };

/** Lists without a required `limit` return this many items. */
const DEFAULT_LIMIT = 100;

const nameParams = {
  type: "object",
  properties: { name: paramSchemas.applicationName },
  required: ["name"],
} as const;

/** Paging query whose `limit` defaults to 100. */
const optionalPaging = (what: string) => {
  const base = pagingQuery(what, false);
  return {
    ...base,
    properties: { ...base.properties, limit: { ...base.properties.limit, default: DEFAULT_LIMIT } },
  };
};

export function packageRoutes(app: FastifyInstance, deps: RestDeps): void {
  app.get<NameParams<{ vulnerable?: boolean | undefined; q?: string | undefined; scope: string[] }>>(
    "/rest/applications/:name/packages",
    {
      schema: {
        summary: "Packages used by an application, with their facts and vulnerabilities",
        description:
          "Lists the package versions used in the latest analysis at or before `date`, ordered by name then " +
          "version, each with the CVE ids affecting it and the most severe of their severities.",
        tags: ["packages"],
        params: nameParams,
        querystring: {
          ...pagingQuery("packages", true),
          properties: {
            ...pagingQuery("packages", true).properties,
            vulnerable: {
              type: "boolean",
              description: "true: only versions affected by a CVE; false: only unaffected ones",
            },
            q: {
              ...paramSchemas.optionalSearchText,
              description: "Keep names containing this text (any case)",
            },
            scope: paramSchemas.scopes,
          },
        },
        response: { 200: { type: "array", items: { $ref: "Package#" } }, ...errorResponses },
      },
    },
    async (request) => {
      const { limit, skip, vulnerable, q, scope: scopes } = request.query;
      const scope = await analysisScope(deps, request);
      return listPackages(deps.db, {
        ...scope,
        limit,
        skip,
        vulnerable,
        q,
        scopes,
      });
    },
  );

  app.get<
    NameParams<{
      package: string;
      ecosystem?: (typeof ECOSYSTEMS)[number] | undefined;
      version?: string | undefined;
    }>
  >(
    "/rest/applications/:name/interactions",
    {
      schema: {
        summary: "Application objects that refer to the external objects of a package",
        description:
          "Lists the references from application objects (source) to external objects of the package (target) " +
          "in the latest analysis at or before `date`, ordered by target fullName and id, then source fullName " +
          "and id. Each names the version of the package its target belongs to (the one the referring code " +
          "loads); `version` keeps one. 404 when the application does not use the package (or that version) " +
          "in that analysis.",
        tags: ["packages"],
        params: nameParams,
        querystring: {
          ...optionalPaging("references"),
          properties: {
            ...optionalPaging("references").properties,
            package: paramSchemas.packageName,
            ecosystem: {
              type: "string",
              enum: [...ECOSYSTEMS],
              description: "Needed only when the name is used in both ecosystems",
            },
            version: {
              ...paramSchemas.packageVersion,
              description: "Keep the objects of this version of the package only",
            },
          },
          required: ["package"],
        },
        response: {
          200: { type: "array", items: { $ref: "Interaction#" } },
          ...errorResponses,
          404: {
            description: "Unknown application, no analysis at or before the date, or package not used",
            $ref: "Problem#",
          },
        },
      },
    },
    async (request) => {
      const { limit, skip, package: name, ecosystem, version } = request.query;
      const found = await applicationAt(deps, request);
      const { application, analysis } = found;
      const packages = await findUsedPackages(deps.db, {
        applicationId: application.id,
        seq: analysis.seq,
        name,
        ecosystem,
      });
      const used = packages[0];
      if (!used) {
        return refuse(
          404,
          `Application '${application.name}' does not use ${ecosystem ? `${ecosystem} ` : ""}package '${name}' ` +
            `in its analysis of ${toUtcSeconds(analysis.analyzedAt)}`,
        );
      }
      if (packages.length > 1) {
        return refuse(
          400,
          `Package name '${name}' is used in several ecosystems (${packages.map((p) => p.ecosystem).join(", ")}): ` +
            "add the query parameter 'ecosystem'",
        );
      }
      if (version !== undefined && !used.versions.includes(version)) {
        return refuse(
          404,
          `Application '${application.name}' does not use ${name} ${version} in its analysis of ` +
            `${toUtcSeconds(analysis.analyzedAt)} (it uses ${used.versions.join(", ")})`,
        );
      }
      return listInteractions(deps.db, {
        applicationId: application.id,
        seq: analysis.seq,
        packageId: used.id,
        version,
        limit,
        skip,
      });
    },
  );

  app.get<NameParams<{ q: string; type?: string | undefined }>>(
    "/rest/applications/:name/objects",
    {
      schema: {
        summary: "Search the external objects an application refers to",
        description:
          "External objects referred to in the latest analysis at or before `date` whose name, fullName, mangling " +
          "or type contains `q` (any case), optionally of one exact `type` (typeId); ordered by fullName then id.",
        tags: ["packages"],
        params: nameParams,
        querystring: {
          ...optionalPaging("objects"),
          properties: {
            ...optionalPaging("objects").properties,
            q: {
              ...paramSchemas.searchText,
              description: "Text to look for (any case)",
              [SEARCH_PURPOSE]: "text to find in the name, fullName, mangling or type of the objects",
            },
            type: { ...paramSchemas.typeId, description: "Exact typeId to keep, e.g. JS_FUNCTION" },
          },
          required: ["q"],
        },
        response: { 200: { type: "array", items: { $ref: "ExternalObjectMatch#" } }, ...errorResponses },
      },
    },
    async (request) => {
      const { limit, skip, q, type: typeId } = request.query;
      const scope = await analysisScope(deps, request);
      return searchExternalObjects(deps.db, {
        ...scope,
        q,
        typeId,
        limit,
        skip,
      });
    },
  );
}
