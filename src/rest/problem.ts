import type { FastifyReply } from "fastify";
import type { Problem } from "../contracts/admin.ts";
import { problemDetails } from "../contracts/problem-details.ts";
import { asStoreUnavailable } from "../store/store-errors.ts";

/**
 * What a refusal adds to a problem: its own type and title (else about:blank and the status's), the rule and
 * field of an administration input, the members of an unknown vulnerability.
 */
type ProblemExtra = Partial<
  Pick<Problem, "type" | "title" | "rule" | "field" | "vulnerability" | "advisoriesImportedAt">
>;

/**
 * A refusal a route throws: the one error handler of the REST app (app.ts) renders it as problem+json,
 * so a check is one line and no route has to stop after answering.
 */
export class ProblemError extends Error {
  readonly status: number;
  readonly detail: string;
  readonly extra: ProblemExtra | undefined;
  constructor(status: number, detail: string, extra?: ProblemExtra) {
    super(detail);
    this.name = "ProblemError";
    this.status = status;
    this.detail = detail;
    this.extra = extra;
  }
}

/** Stops the request with this problem (thrown; rendered by the app's error handler). */
export function refuse(status: number, detail: string, extra?: ProblemExtra): never {
  throw new ProblemError(status, detail, extra);
}

/** Stops the request with this problem unless `condition` holds (as Logto's `assertThat`). */
export function assertThat(
  condition: unknown,
  status: number,
  detail: string | (() => string),
): asserts condition {
  if (!condition) refuse(status, typeof detail === "function" ? detail() : detail);
}

export function sendProblem(
  reply: FastifyReply,
  status: number,
  detail: string,
  extra?: ProblemExtra,
): FastifyReply {
  const body = { ...problemDetails(status, detail, reply.request.url.split("?")[0]), ...extra };
  return reply.code(status).type("application/problem+json").send(JSON.stringify(body));
}

/**
 * The one rendering of a thrown error: a ProblemError as it says, another 4xx error (Fastify's own, e.g.
 * an unsupported media type) with its message, anything else 500 with `failure`, logged, no detail.
 */
export function sendError(
  reply: FastifyReply,
  error: unknown,
  options: { failure: string; log: string } = {
    failure: "The server could not complete the request",
    log: "request failed",
  },
): FastifyReply {
  const { status, detail, extra, retryAfter } = problemOf(error, options.failure);
  if (status === 500) reply.log.error({ err: error }, options.log);
  if (retryAfter !== undefined) reply.header("retry-after", String(retryAfter));
  return sendProblem(reply, status, detail, extra);
}

/**
 * What a thrown error answers (sendError's rule, also for the in-process reads): a ProblemError as it
 * says, another 4xx error with its message, the store unavailable (database down, restarting, paused,
 * out of connections; SQLite locked by another process or its file failing) 503 with the seconds to wait
 * before retrying, anything else 500 with `failure` (the caller logs it).
 */
export function problemOf(
  error: unknown,
  failure = "The server could not complete the request",
): { status: number; detail: string; extra?: ProblemExtra; retryAfter?: number } {
  if (error instanceof ProblemError)
    return { status: error.status, detail: error.detail, extra: error.extra };
  const unavailable = asStoreUnavailable(error);
  if (unavailable) {
    return {
      status: 503,
      detail: `The store is unavailable (${unavailable.message}): retry in ${unavailable.retryAfterSeconds} s`,
      retryAfter: unavailable.retryAfterSeconds,
    };
  }
  const { statusCode, message } = error as { statusCode?: number; message?: string };
  if (statusCode && statusCode >= 400 && statusCode < 500)
    return { status: statusCode, detail: String(message) };
  return { status: 500, detail: failure };
}
