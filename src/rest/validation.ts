/**
 * Parameter validation of the REST routes: each route's declared `params` and `querystring` schema
 * decides which rule of params.ts checks each parameter, so a handler receives checked, normalized values
 * (a number for `limit`, the upper-case CVE id, the instant of a date) and never validates. A refusal is a
 * ProblemError carrying the rule's own sentence, rendered by the app's one error handler.
 *
 * Why rules and not Ajv's own checks: Ajv coerces query strings loosely ("1e2", " 5" and "0x10" are the
 * integer `limit`), and each 400 must keep naming exactly what was wrong, as params.ts does. Why one
 * step for path and query, not Fastify's per-part validators: those check the path before the query,
 * and the API has always named a bad `limit` before a bad name.
 */
import type { FastifyInstance, FastifyRequest, FastifySchemaCompiler } from "fastify";
import { SEVERITIES } from "../contracts/platform.ts";
import { bodyCheckOf } from "./body.ts";
import {
  type Parsed,
  paramSchemas,
  parseApplicationName,
  parseBoolean,
  parseCveReference,
  parseDateTime,
  parseEcosystem,
  parseGateRuleId,
  parseLimit,
  parsePackageName,
  parsePackageVersion,
  parseScopes,
  parseSearchText,
  parseSeverities,
  parseSkip,
  parseTypeId,
} from "./params.ts";
import { ProblemError } from "./problem.ts";

/** What a required search text is for, in its "is required" sentence (not part of the OpenAPI document). */
export const SEARCH_PURPOSE: unique symbol = Symbol("search purpose");

interface PropertySchema {
  type?: string;
  pattern?: string;
  maximum?: number;
  default?: unknown;
  enum?: readonly unknown[];
  [SEARCH_PURPOSE]?: string;
}

type Rule = (raw: unknown) => Parsed<unknown>;

/**
 * The rule a declared parameter names by its schema; undefined for a string with no rule's pattern (the
 * administration routes' user and client names, which their handlers judge). Anything else without a
 * rule is refused when the route is declared, so no parameter goes unchecked by mistake.
 */
function ruleOf(key: string, schema: PropertySchema, required: boolean): Rule | undefined {
  switch (schema.pattern) {
    case paramSchemas.applicationName.pattern:
      return parseApplicationName;
    case paramSchemas.cveReference.pattern:
      return parseCveReference;
    case paramSchemas.gateRuleId.pattern:
      return parseGateRuleId;
    case paramSchemas.packageName.pattern:
      return parsePackageName;
    case paramSchemas.severities.pattern:
      return (raw) => parseSeverities(raw, SEVERITIES);
    case paramSchemas.scopes.pattern:
      return parseScopes;
    case paramSchemas.packageVersion.pattern:
      return parsePackageVersion;
    case paramSchemas.dateTime.pattern:
      return required ? (raw) => requiredDateTime(raw, key) : (raw) => parseDateTime(raw, key);
    case paramSchemas.typeId.pattern:
      // searchText, optionalSearchText and typeId share the pattern; `type` is the object type filter.
      if (key === "type") return parseTypeId;
      return (raw) =>
        parseSearchText(raw, { name: key, required, what: schema[SEARCH_PURPOSE] ?? "text to find" });
  }
  if (schema.type === "integer" && key === "limit") {
    if (!required && schema.default === undefined) {
      throw new Error(`Query parameter 'limit' is neither required nor given a default`);
    }
    return (raw) =>
      parseLimit(raw, required ? { required: true } : { required: false, fallback: Number(schema.default) });
  }
  if (schema.type === "integer" && schema.maximum === paramSchemas.skip.maximum) return parseSkip;
  if (schema.type === "boolean") return (raw) => parseBoolean(raw, key);
  if (schema.type === "string" && key === "ecosystem") return parseEcosystem;
  if (schema.type === "string" && schema.enum === undefined) return undefined;
  throw new Error(`No rule checks the parameter '${key}' as its schema declares it`);
}

function requiredDateTime(raw: unknown, key: string): Parsed<string | undefined> {
  const parsed = parseDateTime(raw, key);
  if (parsed.ok && parsed.value === undefined) {
    return {
      ok: false,
      detail: `Query parameter '${key}' is required: an ISO 8601 date-time such as 2024-03-01T00:00:00Z`,
    };
  }
  return parsed;
}

interface ObjectSchema {
  properties?: Record<string, PropertySchema>;
  required?: readonly string[];
}

type Check = [part: "params" | "query", key: string, rule: Rule];

function checksOf(part: Check[0], schema: unknown): Check[] {
  const { properties = {}, required = [] } = (schema ?? {}) as ObjectSchema;
  return Object.entries(properties).flatMap(([key, property]) => {
    const rule = ruleOf(key, property, required.includes(key));
    return rule ? [[part, key, rule] as Check] : [];
  });
}

const isDateTime = ([, key]: Check, schema: unknown) =>
  (schema as ObjectSchema | undefined)?.properties?.[key]?.pattern === paramSchemas.dateTime.pattern;

/**
 * Checks every route's path parameters and query string by the rules its schema names, before the
 * handler runs (route `preValidation`). A refusal names the first parameter at fault in the order the
 * routes have always checked them: the query's paging and filters, the path (the application's name
 * last), then the query's instants. Fastify's own validation step is left with nothing to do for them
 * (`passThrough`). A body declared with body.ts is checked by its declaration's rules first thing after
 * the route's own preValidation hooks, so a route may refuse before its body is judged (an unknown gate
 * rule is 404, users managed in Keycloak are 409, whatever the body). The analysis upload's body is the
 * analysis document, parsed by its own contract (src/scanner/analysis-document) in its handler.
 */
export function validateParameters(app: FastifyInstance): void {
  app.addHook("onRoute", (route) => {
    const bodyCheck = bodyCheckOf(route.schema?.body);
    if (bodyCheck) {
      const checkBody = async (request: FastifyRequest): Promise<void> => {
        request.body = bodyCheck(request.body);
      };
      route.preHandler = [checkBody, ...(route.preHandler ? [route.preHandler].flat() : [])];
    }
    let query: Check[];
    let params: Check[];
    try {
      query = checksOf("query", route.schema?.querystring);
      params = checksOf("params", route.schema?.params);
    } catch (error) {
      throw new Error(`${String(route.method)} ${route.url}: ${(error as Error).message}`);
    }
    const checks = [
      ...query.filter((c) => !isDateTime(c, route.schema?.querystring)),
      ...params.filter(([, key]) => key !== "name"),
      ...params.filter(([, key]) => key === "name"),
      ...query.filter((c) => isDateTime(c, route.schema?.querystring)),
    ];
    if (checks.length === 0) return;
    const check = async (request: FastifyRequest): Promise<void> => {
      const raw = {
        params: (request.params ?? {}) as Record<string, unknown>,
        query: (request.query ?? {}) as Record<string, unknown>,
      };
      const value = { params: { ...raw.params }, query: { ...raw.query } };
      for (const [part, key, rule] of checks) {
        const parsed = rule(raw[part][key]);
        if (!parsed.ok) throw new ProblemError(400, parsed.detail);
        value[part][key] = parsed.value;
      }
      request.params = value.params;
      request.query = value.query;
    };
    route.preValidation = [check, ...(route.preValidation ? [route.preValidation].flat() : [])];
  });
}

/** Fastify's validator for every request part: the data as it is (parameters: validateParameters). */
export const passThrough: FastifySchemaCompiler<unknown> = () => (data) => ({ value: data });
