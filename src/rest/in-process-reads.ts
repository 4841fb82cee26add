/**
 * GET operations of the REST API called in-process (the MCP tools' REST calls when both run in one
 * process), without Fastify's request pipeline: the same authentication (the app's authenticator, so the
 * platform token is verified and a missing or bad one refused exactly as over HTTP), the same parameter
 * checks (the route's own preValidation, validation.ts), then the route's own handler, whose value is handed
 * over as it is instead of being serialized to JSON and parsed back.
 *
 * Only routes whose every step is one of these qualify: a GET with a handler that takes no `reply`
 * (it only returns its value), no route-level hook other than the parameter checks, and a path made of
 * literal segments and `:param`s. Anything else, and any request the router would judge on its own (a
 * malformed percent-encoding, an over-long parameter, a repeated query key), is left to `inject`, which
 * answers it as over HTTP. Each call is counted in the REST API's HTTP metrics as its listener counts it
 * (by route pattern and status); no access log, as with inject.
 */
import { performance } from "node:perf_hooks";
import type { FastifyInstance, FastifyRequest, RouteOptions } from "fastify";
import { problemDetails } from "../contracts/problem-details.ts";
import { httpRequestDuration, httpRequests } from "../observability/metrics.ts";
import { type Authenticator, refusalStatus } from "./authenticate.ts";
import { problemOf } from "./problem.ts";

/** An answer of an in-process GET: the handler's value as JSON would carry it, or a problem. */
export type InProcessAnswer =
  | { status: 200; statusText: "OK"; body: ""; json: unknown }
  | { status: number; statusText: string; body: string; json?: undefined };

/** The direct call: undefined when this request must go through `inject` instead. */
export type InProcessGet = (
  pathAndQuery: string,
  headers: Record<string, string>,
) => Promise<InProcessAnswer> | undefined;

interface DirectRoute {
  pattern: RegExp;
  names: string[];
  route: RouteOptions;
  handler: (request: FastifyRequest) => unknown;
}

const PARAM = /^:([A-Za-z_][A-Za-z0-9_]*)$/;
/** Fastify's `maxParamLength` in app.ts: a longer parameter is the router's 414, answered by inject. */
const MAX_PARAM_LENGTH = 1024;
/** Route-level hooks other than preValidation: a route with any of them is not called directly. */
const OTHER_HOOKS = [
  "onRequest",
  "preParsing",
  "preHandler",
  "preSerialization",
  "onSend",
  "onResponse",
  "onError",
  "onTimeout",
  "onRequestAbort",
] as const;

/**
 * Collects the routes that qualify, as they are declared: register before the other onRoute hooks
 * (compression's per-route hooks, streamLargePages's wrapper, which needs a reply); the parameter checks
 * validation.ts adds to a route later are read at call time. `authenticated`: whether the app's
 * authentication hook applies to a path (the open paths are left to inject).
 */
export function collectInProcessReads(
  app: FastifyInstance,
  authenticated: (path: string) => boolean,
  metricsListener: string,
): { get: (authenticate: Authenticator) => InProcessGet } {
  const routes: DirectRoute[] = [];
  app.addHook("onRoute", (route) => {
    if (route.method !== "GET" || route.handler.length > 1 || !authenticated(route.url)) return;
    if (OTHER_HOOKS.some((hook) => route[hook] !== undefined)) return;
    const names: string[] = [];
    const segments = route.url.split("/").map((segment) => {
      const param = PARAM.exec(segment);
      if (param?.[1]) {
        names.push(param[1]);
        return "([^/]+)";
      }
      return /^[A-Za-z0-9._~-]*$/.test(segment) ? segment.replace(/\./g, "\\.") : undefined;
    });
    if (segments.some((segment) => segment === undefined)) return;
    routes.push({
      pattern: new RegExp(`^${segments.join("/")}/?$`),
      names,
      route,
      handler: route.handler as (request: FastifyRequest) => unknown,
    });
  });
  return {
    get: (authenticate) => (pathAndQuery, headers) => {
      const mark = pathAndQuery.indexOf("?");
      const path = mark < 0 ? pathAndQuery : pathAndQuery.slice(0, mark);
      for (const direct of routes) {
        const match = direct.pattern.exec(path);
        if (!match) continue;
        const params: Record<string, string> = {};
        for (let i = 0; i < direct.names.length; i++) {
          const value = decoded(match[i + 1] as string);
          if (value === undefined) return undefined;
          params[direct.names[i] as string] = value;
        }
        const query = queryOf(mark < 0 ? "" : pathAndQuery.slice(mark + 1));
        if (!query) return undefined;
        return counted(metricsListener, direct.route.url, () =>
          serve(app, direct, authenticate, { pathAndQuery, path, headers, params, query }),
        );
      }
      return undefined;
    },
  };
}

/** The answer, counted as the listener's onResponse hook counts it (observability/http-metrics.ts). */
async function counted(
  listener: string,
  route: string,
  call: () => Promise<InProcessAnswer>,
): Promise<InProcessAnswer> {
  const start = performance.now();
  const answer = await call();
  const labels = { listener, method: "GET", route, status: String(answer.status) };
  httpRequests.inc(labels);
  httpRequestDuration.observe(labels, (performance.now() - start) / 1000);
  return answer;
}

function decoded(raw: string): string | undefined {
  if (raw.length > MAX_PARAM_LENGTH) return undefined;
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
}

/** The query as Fastify would parse it, or undefined for a repeated key (an array there: left to inject). */
function queryOf(search: string): Record<string, string> | undefined {
  const query: Record<string, string> = {};
  if (search === "") return query;
  for (const [key, value] of new URLSearchParams(search)) {
    if (Object.hasOwn(query, key)) return undefined;
    query[key] = value;
  }
  return query;
}

async function serve(
  app: FastifyInstance,
  direct: DirectRoute,
  authenticate: Authenticator,
  call: {
    pathAndQuery: string;
    path: string;
    headers: Record<string, string>;
    params: Record<string, string>;
    query: Record<string, string>;
  },
): Promise<InProcessAnswer> {
  const rawHeaders: string[] = [];
  for (const name in call.headers) rawHeaders.push(name, call.headers[name] as string);
  const request = {
    method: "GET",
    url: call.pathAndQuery,
    headers: call.headers,
    raw: { rawHeaders },
    params: call.params,
    query: call.query,
  } as unknown as FastifyRequest;
  try {
    // The app's onRequest authentication (app.ts), answered as its hook answers.
    const result = await authenticate(request);
    if (!result.ok) return problemAnswer({ status: refusalStatus(result), detail: result.detail }, call.path);
    request.principal = result.principal;
    for (const check of [direct.route.preValidation ?? []].flat()) {
      await (check as (request: FastifyRequest) => unknown).call(app, request);
    }
    const json = await direct.handler.call(app, request);
    return { status: 200, statusText: "OK", body: "", json };
  } catch (error) {
    // As the app's error handler (problem.ts sendError).
    const problem = problemOf(error);
    if (problem.status === 500) app.log.error({ err: error }, "request failed");
    return problemAnswer(problem, call.path);
  }
}

function problemAnswer(problem: ReturnType<typeof problemOf>, path: string): InProcessAnswer {
  const body = { ...problemDetails(problem.status, problem.detail, path), ...problem.extra };
  return { status: problem.status, statusText: body.title, body: JSON.stringify(body) };
}
