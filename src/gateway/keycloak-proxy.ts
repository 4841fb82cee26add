import replyFrom from "@fastify/reply-from";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { forwardableRequestHeaders, forwardableResponseHeaders } from "./hop-by-hop.ts";
import { keepRawBodies, rawBodyOptions } from "./raw-body.ts";
import { watchUpstreams, withoutPerRequestUpstreamErrors } from "./upstream-health.ts";

export interface KeycloakProxyOptions {
  baseUrl: string;
  /** Keycloak as the gateway reaches it, with its relative path (KEYCLOAK_URL), e.g. http://kc:8080/auth. */
  keycloakUrl: string;
}

/**
 * The gateway fronts Keycloak under `/auth`, so the issuer is `{base_url}/auth/realms/{realm}` as with
 * the embedded provider. Only what users and AI clients need is exposed (Keycloak's reverse-proxy guide:
 * `/realms/` and `/resources/`); the admin console and API stay on Keycloak's own address.
 */
export function keycloakProxy(options: KeycloakProxyOptions) {
  const upstream = new URL(options.keycloakUrl);
  const upstreamPath = upstream.pathname.replace(/\/+$/, "");
  const base = new URL(options.baseUrl);
  const forwarded = {
    "x-forwarded-proto": base.protocol.replace(":", ""),
    "x-forwarded-host": base.host,
    "x-forwarded-port": base.port || (base.protocol === "https:" ? "443" : "80"),
  };

  return async function keycloak(app: FastifyInstance): Promise<void> {
    await app.register(replyFrom, {
      base: upstream.origin,
      undici: { connections: 32, pipelining: 1, keepAliveTimeout: 60_000, headersTimeout: 30_000 },
    });
    keepRawBodies(app, 1024 * 1024);
    // Keycloak down under load: one warning, then a count every 10 s, not a stack trace per request.
    const outages = watchUpstreams({}, { log: app.log });
    app.addHook("onClose", async () => outages.stop());
    app.addHook("onRequest", async (request) => {
      request.log = withoutPerRequestUpstreamErrors(request.log);
    });

    const forward = (request: FastifyRequest, reply: FastifyReply) =>
      reply.from(`${upstreamPath}${request.url.slice("/auth".length)}`, {
        ...rawBodyOptions(request),
        rewriteRequestHeaders: (_request, headers) => ({
          ...forwardableRequestHeaders(headers),
          ...forwarded,
          "x-forwarded-for": [headers["x-forwarded-for"], request.ip].filter(Boolean).join(", "),
        }),
        rewriteHeaders: (headers) => forwardableResponseHeaders(headers),
        onResponse: (_request, upstreamReply, upstream) => {
          outages.reached("keycloak");
          upstreamReply.send(upstream.stream);
        },
        onError: (errorReply, { error }) => {
          if (errorReply.raw.destroyed || request.raw.socket?.destroyed) return;
          outages.failed("keycloak", error);
          errorReply.code(502).type("application/json").send({
            error: "temporarily_unavailable",
            error_description: "The identity provider (Keycloak) cannot be reached: try again shortly",
          });
        },
      });
    for (const prefix of ["/auth/realms", "/auth/resources"]) {
      app.all(prefix, forward);
      app.all(`${prefix}/*`, forward);
    }
    // Keycloak's own pages for anything else would be HTML: say where they are instead.
    const elsewhere = (request: FastifyRequest, reply: FastifyReply) =>
      reply
        .code(404)
        .type("application/json")
        .send({
          error: "not_found",
          error_description: `${request.url.split("?")[0]} is not published by the gateway: Keycloak's administration is at its own address`,
        });
    app.all("/auth", elsewhere);
    app.all("/auth/*", elsewhere);
  };
}
