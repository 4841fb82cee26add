import type { FastifyReply, FastifyRequest } from "fastify";
import type { Kysely } from "kysely";
import { canReadApplication, type Principal } from "../auth/principal.ts";
import {
  type AnalysisRef,
  type ApplicationRow,
  findApplication,
  resolveAnalysis,
} from "../store/insights.ts";
import type { Database } from "../store/schema.ts";
import { type Parsed, parseApplicationName, parseDateTime } from "./params.ts";
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
  const application = await findApplication(deps.db, name);
  if (!application) {
    sendProblem(reply, 404, `No application named '${name}'`);
    return REPLIED;
  }
  if (!request.principal || !canReadApplication(request.principal, name)) {
    sendProblem(reply, 403, `You are not allowed to read application '${name}'`);
    return REPLIED;
  }
  const analysis = await resolveAnalysis(deps.db, application.id, date);
  if (!analysis) {
    sendProblem(
      reply,
      404,
      date
        ? `Application '${name}' has no analysis at or before ${date}`
        : `Application '${name}' has not been analyzed yet`,
    );
    return REPLIED;
  }
  return { application, analysis };
}
