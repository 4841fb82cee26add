import replyFrom from "@fastify/reply-from";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { BoundedCache } from "../auth/bounded-cache.ts";
import type { McpAccessVerifier } from "../auth/mcp-access.ts";
import {
  TokenExchangeRefusedError,
  type TokenExchanger,
  TokenExchangeUnavailableError,
} from "../auth/token-exchange.ts";
import type { exchangeRefusalLog } from "./exchange-refusals.ts";
import { forwardableRequestHeaders, forwardableResponseHeaders } from "./hop-by-hop.ts";
import { jsonRpcError, requestId } from "./json-rpc-error.ts";
import { bearerChallenge, type McpResource, resourceUrl } from "./mcp-resources.ts";
import { CORS_ALLOW_HEADERS, CORS_ALLOW_METHODS, CORS_EXPOSE_HEADERS } from "./origin-policy.ts";
import { keepRawBodies, rawBodyOptions } from "./raw-body.ts";
import { type UpstreamHealth, withoutPerRequestUpstreamErrors } from "./upstream-health.ts";

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
}

const SESSION_TTL_MS = 24 * 3_600_000;
/** Headers that must never reach an MCP server from the client (Origin was checked here already). */
const STRIPPED = ["authorization", "cookie", "x-api-key", "proxy-authorization", "forwarded", "origin"];

/**
 * One MCP route: CORS and origin check, token verification for this resource, token exchange, the
 * session-to-user binding, then a streaming proxy to the internal MCP server with the exchanged token.
 */
export async function mcpProxy(app: FastifyInstance, options: McpProxyOptions): Promise<void> {
  const { baseUrl, resource } = options;
  const resourceId = resourceUrl(baseUrl, resource);
  const forwardedProto = new URL(baseUrl).protocol.replace(":", "");
  const forwardedHost = new URL(baseUrl).host;

  await app.register(replyFrom, {
    base: resource.upstreamUrl,
    // SSE streams stay open as long as the client wants: no body timeout.
    undici: {
      connections: 128,
      pipelining: 1,
      keepAliveTimeout: 60_000,
      headersTimeout: 300_000,
      bodyTimeout: 0,
    },
  });
  // The body goes upstream byte for byte: the MCP server parses it and answers JSON-RPC errors itself.
  keepRawBodies(app);
  app.addHook("onRequest", async (request) => {
    request.log = withoutPerRequestUpstreamErrors(request.log);
  });
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

  const unavailable = (reply: FastifyReply, message: string, id: string | number | null) =>
    reply
      .code(503)
      .header("retry-after", "5")
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
      const id = requestId(request.body);
      const decision = await options.access.check(request.headers.authorization, resourceId);
      if (!decision.ok) {
        if (decision.status === 503) {
          return unavailable(
            reply,
            `The identity provider cannot be reached to check the token: ${decision.description}`,
            id,
          );
        }
        const sent = request.headers.authorization !== undefined;
        const problem = sent ? { error: decision.error, description: decision.description } : undefined;
        return reply
          .code(decision.status)
          .header("www-authenticate", bearerChallenge(baseUrl, resource, problem))
          .send({ error: decision.error, error_description: decision.description });
      }

      const sessionId = request.headers["mcp-session-id"];
      if (sessionId !== undefined && options.sessions.get(String(sessionId)) !== decision.subject) {
        // Another user's live session and an id this gateway never opened get the same bytes, from
        // here: nothing tells the caller which ids exist. A client then initializes anew (MCP transport).
        return sessionNotFound(reply, id);
      }

      let platformToken: string;
      try {
        platformToken = (await options.exchanger.exchange(decision.token, decision.expiresAt)).accessToken;
      } catch (error) {
        if (error instanceof TokenExchangeUnavailableError) {
          return unavailable(
            reply,
            `The identity provider cannot be reached to exchange the token: ${error.message}`,
            id,
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

      return reply.from(request.url, {
        ...rawBodyOptions(request),
        rewriteRequestHeaders: (_request, headers) => {
          const forwarded: Record<string, string | string[] | undefined> = forwardableRequestHeaders(headers);
          for (const name of STRIPPED) delete forwarded[name];
          forwarded.authorization = `Bearer ${platformToken}`;
          forwarded["x-forwarded-proto"] = forwardedProto;
          forwarded["x-forwarded-host"] = forwardedHost;
          return forwarded;
        },
        rewriteHeaders: (headers) => forwardableResponseHeaders(headers),
        onResponse: (_request, upstreamReply, upstream) => {
          options.health.reached(upstreamName);
          // reply-from has copied the upstream status and headers onto the reply by now.
          const opened = upstreamReply.getHeader("mcp-session-id");
          if (typeof opened === "string")
            options.sessions.set(opened, decision.subject, Date.now() + SESSION_TTL_MS);
          // Ended by the client, or gone upstream (idle, restarted): the binding goes too.
          const ended =
            (request.method === "DELETE" && upstreamReply.statusCode < 300) ||
            upstreamReply.statusCode === 404;
          if (typeof sessionId === "string" && ended) options.sessions.delete(sessionId);
          upstreamReply.send(upstream.stream);
        },
        onError: (errorReply, { error }) => {
          if (errorReply.raw.destroyed || request.raw.socket?.destroyed) return;
          options.health.failed(upstreamName, error);
          errorReply
            .code(502)
            .type("application/json")
            .send(
              jsonRpcError(
                -32000,
                `The ${resource.kind} MCP server cannot be reached: ${(error as Error).message || "upstream error"}`,
                id,
              ),
            );
        },
      });
    },
  });
}
