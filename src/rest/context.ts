import type { FastifyReply, FastifyRequest } from "fastify";
import type { Kysely } from "kysely";
import { canReadApplication, isAdmin, type Principal } from "../auth/principal.ts";
import {
  type AnalysisRef,
  type ApplicationRow,
  findApplication,
  resolveAnalysis,
} from "../store/insights.ts";
import type { Database } from "../store/schema.ts";
import { type Parsed, parseApplicationName, parseDateTime, parseLimit, parseSkip } from "./params.ts";
import { sendProblem } from "./problem.ts";

declare module "fastify" {
  interface FastifyRequest {
    principal?: Principal;
  }
}

export interface RestDeps {
  db: Kysely<Database>;
}

/** Unwraps a parameter verdict, answering 400 with its reason when it failed. */
export function take<T>(reply: FastifyReply, parsed: Parsed<T>): T | typeof REPLIED {
  if (parsed.ok) return parsed.value;
  sendProblem(reply, 400, parsed.detail);
  return REPLIED;
}
export const REPLIED: unique symbol = Symbol("replied");

/**
 * The application named in the path, readable by the caller, and the analysis selected by `date`:
 * 400 for a bad name or date, 404 unknown, 403 not readable, 404 no analysis at or before the date.
 */
export async function applicationAt(
  deps: RestDeps,
  request: FastifyRequest<{ Params: { name: string }; Querystring: Record<string, unknown> }>,
  reply: FastifyReply,
): Promise<{ application: ApplicationRow; analysis: AnalysisRef } | typeof REPLIED> {
  const name = take(reply, parseApplicationName(request.params.name));
  if (name === REPLIED) return REPLIED;
  const date = take(reply, parseDateTime(request.query.date));
  if (date === REPLIED) return REPLIED;
  const application = await readableApplication(deps, request, reply, name);
  if (application === REPLIED) return REPLIED;
  const analysis = await analysisAt(deps, reply, application, date);
  if (analysis === REPLIED) return REPLIED;
  return { application, analysis };
}

/** The application `name` when it exists (else 404) and the caller may read it (else 403). */
export async function readableApplication(
  deps: RestDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  name: string,
): Promise<ApplicationRow | typeof REPLIED> {
  const application = await findApplication(deps.db, name);
  if (!application) {
    sendProblem(reply, 404, `No application named '${name}'`);
    return REPLIED;
  }
  if (!request.principal || !canReadApplication(request.principal, name)) {
    sendProblem(reply, 403, `You are not allowed to read application '${name}'`);
    return REPLIED;
  }
  return application;
}

/** The latest analysis at or before `date` (the latest without one), else 404 naming `parameter`. */
export async function analysisAt(
  deps: RestDeps,
  reply: FastifyReply,
  application: ApplicationRow,
  date: string | undefined,
  parameter = "date",
): Promise<AnalysisRef | typeof REPLIED> {
  const analysis = await resolveAnalysis(deps.db, application.id, date);
  if (!analysis) {
    sendProblem(
      reply,
      404,
      date
        ? `Application '${application.name}' has no analysis at or before ${date}` +
            (parameter === "date" ? "" : ` (${parameter})`)
        : `Application '${application.name}' has not been analyzed yet`,
    );
    return REPLIED;
  }
  return analysis;
}

/**
 * Route hook for writes: 403 problem unless the caller is an administrator. It runs before the body
 * is read, so a non-administrator learns nothing from how a body would have been judged.
 */
export function adminOnly(what: string) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    if (request.principal && isAdmin(request.principal)) return undefined;
    return sendProblem(reply, 403, `Only administrators may change ${what}`);
  };
}

/** `limit` and `skip` of a list operation; `fallback` makes `limit` optional. */
export function readPaging(
  query: Record<string, unknown>,
  reply: FastifyReply,
  fallback?: number,
): { limit: number; skip: number } | typeof REPLIED {
  const limit = take(
    reply,
    parseLimit(query.limit, fallback === undefined ? { required: true } : { required: false, fallback }),
  );
  if (limit === REPLIED) return REPLIED;
  const skip = take(reply, parseSkip(query.skip));
  if (skip === REPLIED) return REPLIED;
  return { limit, skip };
}
