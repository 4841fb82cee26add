import type { FastifyRequest } from "fastify";
import { isAdmin } from "../auth/principal.ts";
import { FieldRuleError } from "../domain/field-rule-error.ts";
import { UserError } from "../domain/users.ts";
import { IdentityAdministrationError } from "../idp/administration.ts";
import { CimdEditError } from "../idp/cimd/edit.ts";
import { CimdStoreError } from "../store/cimd.ts";
import { type BodyField, type BodyRefusals, bodyField, declareBody } from "./body.ts";
import { paramSchemas, parseApplicationName } from "./params.ts";
import { assertThat, ProblemError } from "./problem.ts";

/**
 * Route hook of every administration endpoint, reads included (they show who may sign in and which
 * clients are trusted): 403 unless the caller is an administrator, before any body is read.
 */
function administratorsOnly(what: string) {
  return async (request: FastifyRequest): Promise<void> => {
    assertThat(
      request.principal && isAdmin(request.principal),
      403,
      `Only administrators may manage ${what}`,
    );
  };
}

/** What every administration route declares: its guard, OpenAPI tag and problem+json responses. */
export function adminRoutes(what: string) {
  const problem = (description: string) => ({ description, $ref: "Problem#" });
  return {
    guard: administratorsOnly(what),
    tags: ["administration"],
    problem,
    notAdministrator: { 403: problem("The caller is not an administrator") },
    inputRefused: { 400: problem("The input breaks a rule (named in `rule`)") },
  };
}

/** A refused input: answered 400 naming the field and the rule. */
export class InputError extends FieldRuleError {
  override name = "InputError";
}

/** How an administration body is refused when no field is at fault: `rule` named, `field` the key. */
const ADMIN_BODY_REFUSALS: BodyRefusals = {
  absent: "empty",
  notObject: () => new InputError("", "body-object", "The request body must be a JSON object"),
  // A misspelt setting is refused, not silently ignored.
  unknown: (key, known) =>
    new InputError(key, "unknown-property", `Unknown property '${key}': expected ${known.join(", ")}`),
};

/** An administration route's body: its fields checked in this order, refusals naming rule and field. */
export function adminBody<F extends Record<string, BodyField<unknown>>>(
  fields: F,
  options: { keywords?: Readonly<Record<string, unknown>>; nothingToChange?: boolean } = {},
) {
  return declareBody(
    fields,
    options.nothingToChange
      ? {
          ...ADMIN_BODY_REFUSALS,
          nothingSet: () =>
            new InputError("", "nothing-to-change", "Nothing to change: give at least one setting"),
        }
      : ADMIN_BODY_REFUSALS,
    options.keywords ? { keywords: options.keywords } : {},
  );
}

export function optionalString(value: unknown, field: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string") throw new InputError(field, "type-string", `${field} must be a string`);
  return value;
}

function optionalBoolean(value: unknown, field: string): boolean | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "boolean")
    throw new InputError(field, "type-boolean", `${field} must be true or false`);
  return value;
}

export function optionalStringList(value: unknown, field: string): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || !value.every((v) => typeof v === "string"))
    throw new InputError(field, "type-string-list", `${field} must be a list of strings`);
  return value as string[];
}

/** A field the handler reads as given: a string, true/false or a list of strings. */
export const stringField = (schema: Readonly<Record<string, unknown>>) => bodyField(schema, optionalString);
export const booleanField = (schema: Readonly<Record<string, unknown>>) => bodyField(schema, optionalBoolean);
export const stringListField = (schema: Readonly<Record<string, unknown>>) =>
  bodyField(schema, optionalStringList);

/**
 * The problem an error of the administration work stands for: bad input 400 naming the rule, unknown
 * 404, taken 409, Keycloak unreachable or refusing 502; undefined for any other error (500, logged).
 * The app's error handler renders it, so the routes just let these errors through.
 */
export function adminProblem(error: unknown): ProblemError | undefined {
  if (error instanceof InputError || error instanceof CimdEditError)
    return new ProblemError(400, `${error.message} (rule ${error.rule})`, {
      rule: error.rule,
      ...(error.field ? { field: error.field } : {}),
    });
  if (error instanceof CimdStoreError)
    return new ProblemError(error.code === "exists" ? 409 : 404, error.message);
  if (error instanceof UserError) {
    if (error.code === "unknown") return new ProblemError(404, error.message);
    if (error.code === "duplicate") return new ProblemError(409, error.message);
    return new ProblemError(400, `${error.message} (rule ${error.code})`, { rule: error.code });
  }
  if (error instanceof IdentityAdministrationError) return new ProblemError(502, error.message);
  return undefined;
}

/** The applications a viewer (user or API key) may read, each a valid application name (none: []). */
export function applicationsField(description: string): BodyField<string[]> {
  return bodyField({ type: "array", items: paramSchemas.applicationName, description }, (value, field) => {
    const applications = optionalStringList(value, field) ?? [];
    for (const name of applications) {
      const parsed = parseApplicationName(name);
      if (!parsed.ok) throw new InputError(field, "invalid-application", parsed.detail);
    }
    return applications;
  });
}
