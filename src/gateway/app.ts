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
import { guardCredentialHeaders } from "./credential-guard.ts";
import { mcpProxy } from "./mcp-proxy.ts";
import type { McpResource } from "./mcp-resources.ts";
import { createOriginPolicy } from "./origin-policy.ts";
import { keepRawBodies, rawBodyOptions } from "./raw-body.ts";
import { type UpstreamHealth, watchUpstreams } from "./upstream-health.ts";
import { wellKnownRoutes } from "./well-known.ts";

export interface GatewayOptions {
  baseUrl: string;
  issuer: string;
  restUpstreamUrl: string;
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
  logger?: FastifyServerOptions["logger"];
}

/** The public listener: the one address users and AI clients reach. */
export async function buildGateway(options: GatewayOptions): Promise<FastifyInstance> {
  const app = Fastify({
    logger: options.logger ?? false,
    ...(options.https ? { https: options.https } : {}),
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 1024 },
  } as FastifyServerOptions);

  const health: UpstreamHealth = watchUpstreams({
    rest: `${options.restUpstreamUrl}/rest/health`,
    ...Object.fromEntries(options.mcp.resources.map((r) => [`mcp-${r.kind}`, `${r.upstreamUrl}/healthz`])),
  });
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

  guardCredentialHeaders(app, { baseUrl: options.baseUrl, resources: options.mcp.resources });

  wellKnownRoutes(app, {
    baseUrl: options.baseUrl,
    issuer: options.issuer,
    resources: options.mcp.resources,
    registrationEndpoint: options.registrationEndpoint,
  });

  const originAllowed = createOriginPolicy(options.baseUrl, options.mcp.allowedOrigins);
  const sessions = new BoundedCache<string>(100_000);
  for (const resource of options.mcp.resources) {
    await app.register(async (scope) =>
      mcpProxy(scope, {
        baseUrl: options.baseUrl,
        resource,
        access: options.mcp.access,
        exchanger: options.mcp.exchanger,
        originAllowed,
        sessions,
      }),
    );
  }

  if (options.identityProvider) await app.register(options.identityProvider);

  // The REST API is forwarded as is: it authenticates callers itself.
  await app.register(async (scope) => {
    await scope.register(replyFrom, {
      base: options.restUpstreamUrl,
      undici: { connections: 64, pipelining: 1, keepAliveTimeout: 60_000 },
    });
    keepRawBodies(scope);
    const forwardRest = (request: FastifyRequest, reply: FastifyReply) =>
      reply.from(request.url, rawBodyOptions(request));
    scope.all("/rest", forwardRest);
    scope.all("/rest/*", forwardRest);
  });

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
