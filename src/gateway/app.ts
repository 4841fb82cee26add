import replyFrom from "@fastify/reply-from";
import Fastify, {
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
} from "fastify";
import { BoundedCache } from "../auth/bounded-cache.ts";
import type { McpAccessVerifier } from "../auth/mcp-access.ts";
import type { TokenExchanger } from "../auth/token-exchange.ts";
import { accessLogController } from "../config/logging.ts";
import { recordHttpMetrics } from "../observability/http-metrics.ts";
import { drainRequests } from "../observability/metrics.ts";
import { requestIdOf, upstreamTraceparent } from "../observability/trace-context.ts";
import { asStoreUnavailable } from "../store/store-errors.ts";
import { type ConsoleOptions, consoleRoutes } from "./console/index.ts";
import { guardCredentialHeaders } from "./credential-guard.ts";
import { exchangeRefusalLog } from "./exchange-refusals.ts";
import { forwardableRequestHeaders, forwardableResponseHeaders } from "./hop-by-hop.ts";
import { mcpProxy } from "./mcp-proxy.ts";
import type { McpResource } from "./mcp-resources.ts";
import { createOriginPolicy } from "./origin-policy.ts";
import { probeRoutes, type ReadinessCheck } from "./probes.ts";
import { answerClientError, sendGatewayProblem } from "./problem.ts";
import { keepRawBodies, rawBodyOptions } from "./raw-body.ts";
import { originFormTarget } from "./request-target.ts";
import { type DirectRestApp, forwardRestDirect, leaveBodiesUnread } from "./rest-direct.ts";
import { type UpstreamHealth, watchUpstreams, withoutPerRequestUpstreamErrors } from "./upstream-health.ts";
import { wellKnownRoutes } from "./well-known.ts";

export interface GatewayOptions {
  baseUrl: string;
  issuer: string;
  restUpstreamUrl: string;
  /**
   * The REST application when it runs in this process: `/rest` requests are then handed to its request
   * listener, which answers the client directly (`restUpstreamUrl` is still probed for health).
   */
  restApp?: DirectRestApp | undefined;
  /** Largest request body forwarded to the REST API: analysis uploads may exceed the 4 MiB default. */
  restBodyLimit?: number;
  mcp: {
    resources: McpResource[];
    access: McpAccessVerifier;
    exchanger: TokenExchanger;
    allowedOrigins: string[];
  };
  version: string;
  /** The issuer's registration endpoint when dynamic client registration is on (/register leads there). */
  registrationEndpoint?: string | undefined;
  /** Plugin serving the embedded identity provider at its issuer path, when it runs here. */
  identityProvider?: ((scope: FastifyInstance) => Promise<void>) | undefined;
  https?: { cert: Buffer; key: Buffer } | undefined;
  /** The web console at `/` and `/console/...` (absent: those paths answer 404). */
  console?: Omit<ConsoleOptions, "baseUrl" | "version" | "restUpstreamUrl"> | undefined;
  /** What `/readyz` checks besides the upstreams (the store...). */
  readiness?: Record<string, ReadinessCheck> | undefined;
  /**
   * Whether the process drains before stopping (SIGTERM): `/readyz` then fails, so the load balancer
   * takes this replica out, while every request is still served, each answer closing its connection.
   */
  draining?: (() => boolean) | undefined;
  /**
   * Whether the store is taken as available: while it is not, an MCP `tools/call` (whose tools read it)
   * is answered 503 with Retry-After and a JSON-RPC error at once; what needs no store goes on.
   */
  storeAvailability?: (() => { available: true } | { available: false; reason: string }) | undefined;
  logger?: FastifyServerOptions["logger"];
  /** Health checks' request lines at debug (a log read by a person: config/logging.ts). */
  quietHealthChecks?: boolean;
}

/** The public listener: the one address users and AI clients reach. */
export async function buildGateway(options: GatewayOptions): Promise<FastifyInstance> {
  const app = Fastify({
    logger: options.logger ?? false,
    logController: accessLogController({ pretty: Boolean(options.quietHealthChecks) }),
    ...(options.https ? { https: options.https } : {}),
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 1024 },
    rewriteUrl: originFormTarget,
    genReqId: requestIdOf,
    clientErrorHandler: answerClientError,
    // Malformed percent-encoding in the path: problem+json on the REST API's paths, JSON elsewhere.
    frameworkErrors: (error: { statusCode?: number }, request: FastifyRequest, reply: FastifyReply) =>
      request.url.startsWith("/rest")
        ? sendGatewayProblem(reply, error.statusCode ?? 400, "The URL is malformed")
        : reply
            .code(error.statusCode ?? 400)
            .type("application/json")
            .send({ error: "invalid_request", error_description: "The URL is malformed" }),
  } as FastifyServerOptions);

  recordHttpMetrics(app, "gateway");
  // Draining: every answer closes its connection, so no idle keep-alive connection is left for the load
  // balancer to reuse once it has taken this replica out. Not a `Connection` header, which the in-process
  // MCP and REST hand-offs drop as hop-by-hop: without keep-alive, Node writes `Connection: close` and
  // ends the connection once the answer is out, whoever writes it.
  const draining = options.draining;
  if (draining) {
    app.server.prependListener("request", (_request, response) => {
      if (!draining()) return;
      response.shouldKeepAlive = false;
      drainRequests.inc();
    });
  }
  // A store that cannot serve (database down, restarting, out of connections) is a 503 to retry, on
  // every route of the gateway (the console's sessions, the identity provider's own are answered there).
  app.setErrorHandler((error, _request, reply) => {
    const unavailable = asStoreUnavailable(error);
    if (!unavailable) throw error;
    return reply
      .code(503)
      .header("retry-after", String(unavailable.retryAfterSeconds))
      .header("cache-control", "no-store")
      .type("application/json")
      .send({
        error: "temporarily_unavailable",
        error_description: `The store is unavailable (${unavailable.message}): retry in ${unavailable.retryAfterSeconds} s`,
      });
  });
  const health: UpstreamHealth = watchUpstreams(
    {
      rest: `${options.restUpstreamUrl}/rest/health`,
      ...Object.fromEntries(options.mcp.resources.map((r) => [`mcp-${r.kind}`, `${r.upstreamUrl}/healthz`])),
    },
    { log: app.log },
  );
  app.addHook("onClose", async () => health.stop());

  app.get("/mcp/healthcheck", async () => {
    const upstreams = health.snapshot();
    const up = !Object.values(upstreams).includes("DOWN");
    return {
      status: up ? "UP" : "DEGRADED",
      service: "imaging-services",
      details: { version: options.version, upstreams },
    };
  });

  // An upstream is ready once reached (a probe or a proxied request), and again after an outage; until
  // then each readiness check probes it, so a replica is ready as soon as its upstreams answer.
  const upstreamReady =
    (name: string): ReadinessCheck =>
    async () => {
      const state = await health.current(name);
      return state === "UP" ? undefined : state === "DOWN" ? "cannot be reached" : "not reached yet";
    };
  probeRoutes(app, {
    checks: {
      ...options.readiness,
      ...Object.fromEntries(
        Object.keys(health.snapshot()).map((name) => [`upstream ${name}`, upstreamReady(name)]),
      ),
    },
    log: app.log,
    draining: options.draining,
  });

  guardCredentialHeaders(app, { baseUrl: options.baseUrl, resources: options.mcp.resources });

  wellKnownRoutes(app, {
    baseUrl: options.baseUrl,
    issuer: options.issuer,
    resources: options.mcp.resources,
    registrationEndpoint: options.registrationEndpoint,
  });

  const originAllowed = createOriginPolicy(options.baseUrl, options.mcp.allowedOrigins);
  const sessions = new BoundedCache<string>(100_000);
  const logRefusal = exchangeRefusalLog();
  for (const resource of options.mcp.resources) {
    await app.register(async (scope) =>
      mcpProxy(scope, {
        baseUrl: options.baseUrl,
        resource,
        access: options.mcp.access,
        exchanger: options.mcp.exchanger,
        originAllowed,
        sessions,
        logRefusal,
        health,
        storeAvailability: options.storeAvailability,
      }),
    );
  }

  if (options.identityProvider) await app.register(options.identityProvider);

  // The REST API is forwarded as is: it authenticates callers itself.
  const restApp = options.restApp;
  await app.register(async (scope) => {
    const bodyLimit = Math.max(options.restBodyLimit ?? 0, 4 * 1024 * 1024);
    if (restApp) leaveBodiesUnread(scope, bodyLimit);
    else {
      await scope.register(replyFrom, {
        base: options.restUpstreamUrl,
        undici: { connections: 64, pipelining: 1, keepAliveTimeout: 60_000 },
      });
      keepRawBodies(scope, bodyLimit);
    }
    scope.addHook("onRequest", async (request) => {
      request.log = withoutPerRequestUpstreamErrors(request.log);
      // Fastify refuses a QUERY without Content-Type before routing (RFC 10008); the REST API, which has
      // no QUERY operation, answers 405 with Allow instead.
      if (request.method === "QUERY" && request.headers["content-type"] === undefined)
        request.headers["content-type"] = "application/octet-stream";
    });
    // What the gateway itself refuses here (a body over its limit...) is problem+json like the REST API.
    scope.setErrorHandler((error: { statusCode?: number; message: string }, request, reply) => {
      const status =
        error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
      if (status === 500) request.log.error({ err: error }, "request failed");
      return sendGatewayProblem(
        reply,
        status,
        status === 500 ? "The gateway could not complete the request" : error.message,
      );
    });
    const forwardRestOverHttp = (request: FastifyRequest, reply: FastifyReply) =>
      reply.from(request.url, {
        ...rawBodyOptions(request),
        rewriteRequestHeaders: (_request, headers) => ({
          ...forwardableRequestHeaders(headers),
          traceparent: upstreamTraceparent(request.id, headers.traceparent),
        }),
        rewriteHeaders: (headers) => forwardableResponseHeaders(headers),
        onResponse: (_request, upstreamReply, upstream) => {
          health.reached("rest");
          upstreamReply.send(upstream.stream);
        },
        onError: (errorReply, { error }) => {
          // A client that went away says nothing about the REST API.
          if (errorReply.raw.destroyed || request.raw.socket?.destroyed) return;
          health.failed("rest", error);
          const timedOut = (error as { statusCode?: number }).statusCode === 504;
          sendGatewayProblem(
            errorReply,
            timedOut ? 504 : 502,
            timedOut
              ? "The REST API did not answer in time: try again shortly"
              : "The REST API cannot be reached: try again shortly",
          );
        },
      });
    // In one process the REST API answers the client itself: the page crosses no second HTTP hop.
    const forwardRest = restApp
      ? forwardRestDirect(restApp, {
          answered: () => health.reached("rest"),
          failed: (error) => health.failed("rest", error),
        })
      : forwardRestOverHttp;
    scope.all("/rest", forwardRest);
    scope.all("/rest/*", forwardRest);
  });

  const consoleOptions = options.console;
  if (consoleOptions) {
    await app.register(async (scope) =>
      consoleRoutes(scope, {
        ...consoleOptions,
        baseUrl: options.baseUrl,
        version: options.version,
        restUpstreamUrl: options.restUpstreamUrl,
      }),
    );
  }

  app.setNotFoundHandler((request, reply) =>
    reply
      .code(404)
      .type("application/json")
      .send({
        error: "not_found",
        error_description: `No such resource: ${request.method} ${request.url.split("?")[0]}`,
      }),
  );
  return app;
}
