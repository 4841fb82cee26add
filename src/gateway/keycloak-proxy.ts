import replyFrom from "@fastify/reply-from";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { OutageLog } from "../auth/log-limits.ts";
import { unverifiedName } from "../idp/keycloak/registered-clients.ts";
import type { RegistrationGate } from "../idp/registration/gate.ts";
import { forwardableRequestHeaders, forwardableResponseHeaders } from "./hop-by-hop.ts";
import { keepRawBodies, rawBodyOptions } from "./raw-body.ts";
import { withoutPerRequestUpstreamErrors } from "./upstream-health.ts";

export interface KeycloakProxyOptions {
  baseUrl: string;
  /** Keycloak as the gateway reaches it, with its relative path (KEYCLOAK_URL), e.g. http://kc:8080/auth. */
  keycloakUrl: string;
  /** DYNAMIC_CLIENT_REGISTRATION on: the policy applied before Keycloak's registration endpoints. */
  registrationGate?: RegistrationGate | undefined;
  /**
   * Called with each client Keycloak registered through the gateway, before the client gets the answer:
   * records it (src/idp/keycloak/registered-clients.ts) so that it may be listed, revoked and expire.
   */
  onRegistered?: ((clientId: string, sourceAddress: string) => Promise<void>) | undefined;
}

/** Keycloak's client registration endpoints: /realms/{realm}/clients-registrations/{provider}[/...]. */
const REGISTRATION = /^\/auth\/realms\/[^/]+\/clients-registrations\/([^/?]+)\/?(?:\?.*)?$/;

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

    const outage = new OutageLog({
      down: (cause, failures) =>
        app.log.error(
          failures === 1
            ? `Keycloak (KEYCLOAK_URL ${options.keycloakUrl}) does not answer: ${cause}. Sign-in and discovery get 503 until it does; tokens already verified and exchanged keep working.`
            : `Keycloak (KEYCLOAK_URL ${options.keycloakUrl}) still does not answer: ${cause} (${failures} requests refused so far)`,
        ),
      up: (failures) =>
        app.log.info(`Keycloak answers again (${failures} requests got 503 while it did not)`),
    });
    // reply-from logs every failed upstream request with its cause; the outage log says it once.
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
        onResponse: (_request, upstreamReply, answer) => {
          outage.answered();
          upstreamReply.send(answer.stream);
        },
        onError: (errorReply, { error }) => {
          // A client that went away is no outage, and has nobody to answer.
          if (errorReply.raw.destroyed || request.raw.socket?.destroyed) return;
          outage.failed(causeOf(error));
          // Never Keycloak's internal address or the socket error: clients only need to retry later.
          errorReply
            .code(503)
            .header("retry-after", RETRY_AFTER_SECONDS)
            .header("cache-control", "no-store")
            .type("application/json")
            .send({
              error: "temporarily_unavailable",
              error_description:
                "The identity provider is not reachable right now; try again in a few seconds.",
            });
        },
      });
    const gate = options.registrationGate;
    /**
     * With registration on, anonymous registrations reach Keycloak only through the OIDC endpoint and
     * the same policy as on the embedded provider (Keycloak's own policies, set at start-up, apply
     * after it); its other registration providers would bypass the policy.
     */
    const guarded = async (request: FastifyRequest, reply: FastifyReply) => {
      const match = gate && request.method === "POST" ? REGISTRATION.exec(request.url) : null;
      if (!gate || !match) return forward(request, reply);
      if (match[1] !== "openid-connect") {
        return reply.code(403).type("application/json").send({
          error: "invalid_request",
          error_description:
            "register through the OpenID Connect registration endpoint (clients-registrations/openid-connect)",
        });
      }
      const body = Buffer.isBuffer(request.body) ? request.body : undefined;
      const verdict = await gate(request.ip, request.headers["content-type"], body);
      if (!verdict.ok) {
        return reply
          .code(verdict.status)
          .headers({ ...verdict.headers, "cache-control": "no-store" })
          .send(verdict.body);
      }
      // What the policy registers: the informative URLs (mcp-remote names its GitHub page) are left
      // out, which Keycloak's Trusted Hosts policy would check against the trusted hosts.
      const registered = { ...verdict.body };
      // Keycloak's consent page shows the client's name: it says there that the name is unverified
      // and where the client redirects.
      const redirectUris = Array.isArray(registered.redirect_uris)
        ? registered.redirect_uris.map(String)
        : [];
      registered.client_name = unverifiedName(
        typeof registered.client_name === "string" ? registered.client_name : undefined,
        redirectUris,
      );
      return reply.from(`${upstreamPath}${request.url.slice("/auth".length)}`, {
        body: Buffer.from(JSON.stringify(registered)),
        contentType: "application/json",
        rewriteRequestHeaders: (_request, headers) => ({
          ...forwardableRequestHeaders(headers),
          ...forwarded,
          "x-forwarded-for": [headers["x-forwarded-for"], request.ip].filter(Boolean).join(", "),
        }),
        rewriteHeaders: (headers) => forwardableResponseHeaders(headers),
        onResponse: (_request, _reply, answer) => {
          void recordRegistration(reply, answer.stream, request.ip);
        },
      });
    };
    /** Keycloak's answer to a registration, passed on once the new client is recorded. */
    const recordRegistration = async (reply: FastifyReply, stream: AsyncIterable<Buffer>, ip: string) => {
      const chunks: Buffer[] = [];
      try {
        for await (const chunk of stream) chunks.push(chunk);
      } catch {
        return reply.code(502).type("application/json").send({
          error: "temporarily_unavailable",
          error_description: "The identity provider's answer was cut off; try again.",
        });
      }
      const answer = Buffer.concat(chunks);
      if (reply.statusCode === 201 && options.onRegistered) {
        try {
          const { client_id } = JSON.parse(answer.toString("utf8")) as { client_id?: unknown };
          if (typeof client_id === "string") await options.onRegistered(client_id, ip);
        } catch (error) {
          // Registered but unrecorded: usable, yet neither listed by `imaging clients` nor expired.
          app.log.error(
            `a client registered with Keycloak could not be recorded: ${(error as Error).message}`,
          );
        }
      }
      return reply.send(answer);
    };
    for (const prefix of ["/auth/realms", "/auth/resources"]) {
      app.all(prefix, guarded);
      app.all(`${prefix}/*`, guarded);
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

const RETRY_AFTER_SECONDS = "5";

/** The socket-level reason (ECONNREFUSED 10.0.0.5:8080, a timeout...) under reply-from's HTTP error. */
function causeOf(error: Error): string {
  const messages: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current instanceof Error && depth < 4; depth++) {
    if (current.message && !messages.includes(current.message)) messages.push(current.message);
    current = (current as { cause?: unknown }).cause;
  }
  return messages.join(": ") || "no answer";
}
