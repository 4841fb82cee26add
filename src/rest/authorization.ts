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
import type { AtDate, NameParams, RestDeps } from "./context.ts";
import { assertThat } from "./problem.ts";

/**
 * The application named in the path, readable by the caller, and the analysis selected by `date`:
 * (the name and date checked by validation.ts), 404 unknown, 403 not readable, 404 no analysis at or before the date.
 */
export async function applicationAt(
  deps: RestDeps,
  request: FastifyRequest<{ Params: NameParams; Querystring: AtDate }>,
): Promise<{ application: ApplicationRow; analysis: AnalysisRef }> {
  const application = await readableApplication(deps, request, request.params.name);
  const analysis = await analysisAt(deps, application, request.query.date);
  return { application, analysis };
}

/** applicationAt as the store's reads take it: the application's id and the selected analysis's seq. */
export async function analysisScope(
  deps: RestDeps,
  request: FastifyRequest<{ Params: NameParams; Querystring: AtDate }>,
): Promise<{ applicationId: number; seq: number }> {
  const { application, analysis } = await applicationAt(deps, request);
  return { applicationId: application.id, seq: analysis.seq };
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
