/**
 * Authorization of the REST routes: the application a caller may read (and the analysis a `date`
 * selects), and administrator-only writes. The principal comes from authenticate.ts.
 */
import type { FastifyRequest } from "fastify";
import { canReadApplication, isAdmin } from "../auth/principal.ts";
import {
  type AnalysisRef,
  type ApplicationRow,
  findApplication,
  resolveAnalysis,
} from "../store/applications.ts";
import { type RestDeps, take } from "./context.ts";
import { parseApplicationName, parseDateTime } from "./params.ts";
import { assertThat } from "./problem.ts";

/**
 * The application named in the path, readable by the caller, and the analysis selected by `date`:
 * 400 for a bad name or date, 404 unknown, 403 not readable, 404 no analysis at or before the date.
 */
export async function applicationAt(
  deps: RestDeps,
  request: FastifyRequest<{ Params: { name: string }; Querystring: Record<string, unknown> }>,
): Promise<{ application: ApplicationRow; analysis: AnalysisRef }> {
  const name = take(parseApplicationName(request.params.name));
  const date = take(parseDateTime(request.query.date));
  const application = await readableApplication(deps, request, name);
  const analysis = await analysisAt(deps, application, date);
  return { application, analysis };
}

/** The application `name` when it exists (else 404) and the caller may read it (else 403). */
export async function readableApplication(
  deps: RestDeps,
  request: FastifyRequest,
  name: string,
): Promise<ApplicationRow> {
  const application = await findApplication(deps.db, name);
  assertThat(application, 404, `No application named '${name}'`);
  assertThat(
    request.principal && canReadApplication(request.principal, name),
    403,
    `You are not allowed to read application '${name}'`,
  );
  return application;
}

/** The latest analysis at or before `date` (the latest without one), else 404 naming `parameter`. */
export async function analysisAt(
  deps: RestDeps,
  application: ApplicationRow,
  date: string | undefined,
  parameter = "date",
): Promise<AnalysisRef> {
  const analysis = await resolveAnalysis(deps.db, application.id, date);
  assertThat(analysis, 404, () =>
    date
      ? `Application '${application.name}' has no analysis at or before ${date}` +
        (parameter === "date" ? "" : ` (${parameter})`)
      : `Application '${application.name}' has not been analyzed yet`,
  );
  return analysis;
}

/**
 * Route hook for writes: 403 problem unless the caller is an administrator. It runs before the body
 * is read, so a non-administrator learns nothing from how a body would have been judged.
 */
export function adminOnly(what: string) {
  return async (request: FastifyRequest): Promise<void> => {
    assertThat(
      request.principal && isAdmin(request.principal),
      403,
      `Only administrators may change ${what}`,
    );
  };
}
