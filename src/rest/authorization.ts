/**
 * Authorization of the REST routes: the application a caller may read (and the analysis a `date`
 * selects), and administrator-only writes. The principal comes from authenticate.ts.
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import { canReadApplication, isAdmin } from "../auth/principal.ts";
import {
  type AnalysisRef,
  type ApplicationRow,
  findApplication,
  resolveAnalysis,
} from "../store/applications.ts";
import { REPLIED, type RestDeps, take } from "./context.ts";
import { parseApplicationName, parseDateTime } from "./params.ts";
import { sendProblem } from "./problem.ts";

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
