import type { OutgoingHttpHeaders } from "node:http";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { Pool } from "undici";
import type { BoundedCache } from "../auth/bounded-cache.ts";
import type { McpAccessVerifier } from "../auth/mcp-access.ts";
import {
  TokenExchangeRefusedError,
  type TokenExchanger,
  TokenExchangeUnavailableError,
} from "../auth/token-exchange.ts";
import { upstreamTraceparent } from "../observability/trace-context.ts";
import { STORE_RETRY_AFTER_SECONDS } from "../store/store-errors.ts";
import type { exchangeRefusalLog } from "./exchange-refusals.ts";
import { forwardableRequestHeaders, forwardableResponseHeaders } from "./hop-by-hop.ts";
import { jsonRpcError, requestId, requestMethod } from "./json-rpc-error.ts";
import { forwardMcpDirect } from "./mcp-direct.ts";
import { bearerChallenge, type McpResource, resourceUrl } from "./mcp-resources.ts";
import { CORS_ALLOW_HEADERS, CORS_ALLOW_METHODS, CORS_EXPOSE_HEADERS } from "./origin-policy.ts";
import { keepRawBodies } from "./raw-body.ts";
import type { UpstreamHealth } from "./upstream-health.ts";
import { type Forward, type ForwardHooks, forwardStreaming } from "./upstream-stream.ts";

export interface McpProxyOptions {
  baseUrl: string;
  resource: McpResource;
  access: McpAccessVerifier;
  exchanger: TokenExchanger;
  originAllowed: (origin: string) => boolean;
  /** Session id → subject of the token that opened it; shared by both MCP routes. */
  sessions: BoundedCache<string>;
  /** Logs refused exchanges (rate-limited); shared by both MCP routes. */
  logRefusal: ReturnType<typeof exchangeRefusalLog>;
  /** Where proxied requests report whether the MCP server answered. */
  health: UpstreamHealth;
  /** Whether the store is taken as available (a tool call is then answered 503 at once). */
  storeAvailability?: (() => { available: true } | { available: false; reason: string }) | undefined;
}

const SESSION_TTL_MS = 24 * 3_600_000;
/**
 * Headers that must never reach an MCP server from the client (Origin was checked here already), and
 * those the hop sets itself (Host names the upstream; the length is the body's, which undici sets).
 */
const STRIPPED: ReadonlySet<string> = new Set([
  "authorization",
  "cookie",
  "x-api-key",
  "proxy-authorization",
  "forwarded",
  "origin",
  "host",
  "content-length",
]);

/**
 * One MCP route: CORS and origin check, token verification for this resource, token exchange, the
 * session-to-user binding, then a streaming proxy to the internal MCP server with the exchanged token.
 */
export async function mcpProxy(app: FastifyInstance, options: McpProxyOptions): Promise<void> {
  const { baseUrl, resource } = options;
  const resourceId = resourceUrl(baseUrl, resource);
  const forwardedProto = new URL(baseUrl).protocol.replace(":", "");
  const forwardedHost = new URL(baseUrl).host;

  // The HTTP hop's connection pools, only when there is an HTTP hop: in one process (`resource.direct`)
  // every request is handed over in-process and a pool would only hold timers and memory.
  // Kept-alive connections to the MCP server, reused by every request. SSE streams stay open as long as
  // the client wants: no body timeout.
  const upstream = resource.direct
    ? undefined
    : new Pool(resource.upstreamUrl, {
        connections: 128,
        pipelining: 1,
        keepAliveTimeout: 60_000,
        headersTimeout: 300_000,
        bodyTimeout: 0,
      });
  // 2025-era GET event streams hold their connection until the client leaves: in the bounded pool, 128 of
  // them would leave every tool call waiting in undici's queue. They get their own pool, one connection each.
  const streamUpstream = resource.direct
    ? undefined
    : new Pool(resource.upstreamUrl, {
        connections: null,
        pipelining: 1,
        keepAliveTimeout: 60_000,
        headersTimeout: 300_000,
        bodyTimeout: 0,
      });
  const upstreamHost = new URL(resource.upstreamUrl).host;
  // Open GET event streams (2025 sessions): they never end by themselves, so a stop ends them.
  const streams = new Set<() => void>();
  let closing = false;
  app.addHook("preClose", async () => {
    closing = true;
    for (const end of streams) end();
  });
  // After the listener has closed (every client connection gone): the upstream connections go too.
  app.addHook("onClose", async () => {
    await Promise.all([upstream?.destroy(), streamUpstream?.destroy()]);
  });
  // The body goes upstream byte for byte: the MCP server parses it and answers JSON-RPC errors itself.
  keepRawBodies(app);
  const upstreamName = `mcp-${resource.kind}`;

  // A client that goes away mid-request (a cancelled tool call) is not a server error.
  app.setErrorHandler((error, request, reply) => {
    if (reply.raw.destroyed || request.raw.destroyed) {
      request.log.debug({ err: error }, "the client closed the connection before the answer");
      return;
    }
    throw error;
  });

  const cors = (request: FastifyRequest, reply: FastifyReply): boolean => {
    const origin = request.headers.origin;
    if (origin === undefined) return true;
    if (!options.originAllowed(origin)) {
      reply
        .code(403)
        .type("application/json")
        .send({ error: "forbidden_origin", error_description: `Origin ${origin} is not allowed` });
      return false;
    }
    reply
      .header("access-control-allow-origin", origin)
      .header("access-control-expose-headers", CORS_EXPOSE_HEADERS)
      .header("vary", "Origin");
    return true;
  };

  const sessionNotFound = (reply: FastifyReply, id: string | number | null) =>
    reply
      .code(404)
      .type("application/json")
      .send(jsonRpcError(-32001, "Session not found", id));

  const unavailable = (reply: FastifyReply, message: string, id: string | number | null, retryAfter = 5) =>
    reply
      .code(503)
      .header("retry-after", String(retryAfter))
      .send(jsonRpcError(-32000, message, id));

  app.options(resource.path, async (request, reply) => {
    if (!cors(request, reply)) return reply;
    return reply
      .code(204)
      .header("access-control-allow-methods", CORS_ALLOW_METHODS)
      .header("access-control-allow-headers", CORS_ALLOW_HEADERS)
      .header("access-control-max-age", "600")
      .send();
  });

  app.route({
    method: ["GET", "POST", "DELETE"],
    url: resource.path,
    handler: async (request, reply) => {
      if (!cors(request, reply)) return reply;
      // Only an answer of the gateway's own needs the JSON-RPC id: the body is parsed then, not before.
      const id = () => requestId(request.body);
      const decision = await options.access.check(request.headers.authorization, resourceId);
      if (!decision.ok) {
        if (decision.status === 503) {
          return unavailable(
            reply,
            `The identity provider cannot be reached to check the token: ${decision.description}`,
            id(),
          );
        }
        const sent = request.headers.authorization !== undefined;
        const problem = sent ? { error: decision.error, description: decision.description } : undefined;
        return reply
          .code(decision.status)
          .header("www-authenticate", bearerChallenge(baseUrl, resource, problem))
          .send({ error: decision.error, error_description: decision.description });
      }

      // The tools read the store: while it is known to be down, a tool call is turned away at once, and
      // what needs no store (initialize, tools/list, ping, the GET stream) goes on.
      const store = options.storeAvailability?.();
      if (store && !store.available && request.method === "POST") {
        const method = request.headers["mcp-method"] ?? requestMethod(request.body);
        if (method === "tools/call") {
          return unavailable(
            reply,
            `The platform's store is unavailable (${store.reason}): retry in ${STORE_RETRY_AFTER_SECONDS} s`,
            id(),
            STORE_RETRY_AFTER_SECONDS,
          );
        }
      }

      const sessionId = request.headers["mcp-session-id"];
      if (sessionId !== undefined && options.sessions.get(String(sessionId)) !== decision.subject) {
        // Another user's live session and an id this gateway never opened get the same bytes, from
        // here: nothing tells the caller which ids exist. A client then initializes anew (MCP transport).
        return sessionNotFound(reply, id());
      }

      let platformToken: string;
      try {
        platformToken = (
          await options.exchanger.exchange(decision.token, decision.expiresAt, decision.digest)
        ).accessToken;
      } catch (error) {
        if (error instanceof TokenExchangeUnavailableError) {
          return unavailable(
            reply,
            `The identity provider cannot be reached to exchange the token: ${error.message}`,
            id(),
          );
        }
        if (error instanceof TokenExchangeRefusedError) options.logRefusal(request.log, decision, error);
        const description =
          error instanceof TokenExchangeRefusedError
            ? `token exchange refused: ${error.message}`
            : "token exchange failed";
        return reply
          .code(401)
          .header(
            "www-authenticate",
            bearerChallenge(baseUrl, resource, { error: "invalid_token", description }),
          )
          .send({ error: "invalid_token", error_description: description });
      }

      if (closing && request.method === "GET") {
        return reply
          .code(503)
          .header("retry-after", "5")
          .header("connection", "close")
          .send(jsonRpcError(-32000, "The gateway is shutting down", null));
      }
      const headers: Record<string, string | string[] | undefined> = forwardableRequestHeaders(
        request.headers,
        STRIPPED,
      );
      headers.host = upstreamHost;
      headers.authorization = `Bearer ${platformToken}`;
      headers["x-forwarded-proto"] = forwardedProto;
      headers["x-forwarded-host"] = forwardedHost;
      headers.traceparent = upstreamTraceparent(request.id, request.headers.traceparent);
      const forward: Forward = {
        method: request.method,
        path: request.url,
        headers,
        body: Buffer.isBuffer(request.body) ? request.body : undefined,
      };
      const hooks: ForwardHooks = {
        onHeaders: (statusCode, upstreamHeaders) => {
          options.health.reached(upstreamName);
          const opened = upstreamHeaders["mcp-session-id"];
          if (typeof opened === "string")
            options.sessions.set(opened, decision.subject, Date.now() + SESSION_TTL_MS);
          // Ended by the client, or gone upstream (idle, restarted): the binding goes too.
          const ended = (request.method === "DELETE" && statusCode < 300) || statusCode === 404;
          if (typeof sessionId === "string" && ended) options.sessions.delete(sessionId);
          // The answer goes out from here, past Fastify's reply: the headers set on it (CORS) go too,
          // the upstream's winning as with any proxied header.
          reply.hijack();
          return Object.assign(
            reply.getHeaders(),
            forwardableResponseHeaders(upstreamHeaders),
          ) as OutgoingHttpHeaders;
        },
        onError: (error) => {
          if (closing) {
            reply
              .code(503)
              .header("retry-after", "5")
              .send(jsonRpcError(-32000, "The gateway is shutting down", id()));
            return;
          }
          options.health.failed(upstreamName, error);
          reply
            .code(502)
            .type("application/json")
            .send(
              jsonRpcError(
                -32000,
                `The ${resource.kind} MCP server cannot be reached: ${error.message || "upstream error"}`,
                id(),
              ),
            );
        },
      };
      // In one process the MCP server answers on the client's connection: no loopback hop.
      const forwarded = resource.direct
        ? forwardMcpDirect(resource.direct, forward, request.raw, reply.raw, hooks)
        : forwardStreaming(
            (request.method === "GET" ? streamUpstream : upstream) as Pool,
            forward,
            reply.raw,
            hooks,
          );
      if (request.method === "GET") {
        streams.add(forwarded.end);
        reply.raw.once("close", () => streams.delete(forwarded.end));
      }
      return reply;
    },
  });
}
