import type { FastifyRequest } from "fastify";
import { isAdmin } from "../auth/principal.ts";
import { FieldRuleError } from "../domain/field-rule-error.ts";
import { UserError } from "../domain/users.ts";
import { IdentityAdministrationError } from "../idp/administration.ts";
import { CimdEditError } from "../idp/cimd/edit.ts";
import { CimdStoreError } from "../store/cimd.ts";
import { parseApplicationName } from "./params.ts";
import { assertThat, ProblemError } from "./problem.ts";

/**
 * Route hook of every administration endpoint, reads included (they show who may sign in and which
 * clients are trusted): 403 unless the caller is an administrator, before any body is read.
 */
export function administratorsOnly(what: string) {
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

/** The JSON object body (an absent body is an empty object). */
export function bodyObject(body: unknown): Record<string, unknown> {
  if (body === undefined || body === null) return {};
  if (typeof body !== "object" || Array.isArray(body))
    throw new InputError("", "body-object", "The request body must be a JSON object");
  return body as Record<string, unknown>;
}

/** Refuses properties the operation does not know, so a misspelt setting is not silently ignored. */
export function onlyKnown(body: Record<string, unknown>, known: readonly string[]): void {
  for (const key of Object.keys(body))
    if (!known.includes(key))
      throw new InputError(
        key,
        "unknown-property",
        `Unknown property '${key}': expected ${known.join(", ")}`,
      );
}

export function optionalString(body: Record<string, unknown>, field: string): string | undefined {
  const value = body[field];
  if (value === undefined) return undefined;
  if (typeof value !== "string") throw new InputError(field, "type-string", `${field} must be a string`);
  return value;
}

export function optionalBoolean(body: Record<string, unknown>, field: string): boolean | undefined {
  const value = body[field];
  if (value === undefined) return undefined;
  if (typeof value !== "boolean")
    throw new InputError(field, "type-boolean", `${field} must be true or false`);
  return value;
}

export function optionalStringList(body: Record<string, unknown>, field: string): string[] | undefined {
  const value = body[field];
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || !value.every((v) => typeof v === "string"))
    throw new InputError(field, "type-string-list", `${field} must be a list of strings`);
  return value as string[];
}

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

/** The applications a viewer (user or API key) may read, each a valid application name. */
export function applicationsOf(body: Record<string, unknown>): string[] {
  const applications = optionalStringList(body, "applications") ?? [];
  for (const name of applications) {
    const parsed = parseApplicationName(name);
    if (!parsed.ok) throw new InputError("applications", "invalid-application", parsed.detail);
  }
  return applications;
}
