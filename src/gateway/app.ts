import replyFrom from "@fastify/reply-from";
import Fastify, { type FastifyInstance, type FastifyServerOptions } from "fastify";
import { type UpstreamHealth, watchUpstreams } from "./upstream-health.ts";

export interface GatewayOptions {
  restUpstreamUrl: string;
  version: string;
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

  const health: UpstreamHealth = watchUpstreams({ rest: `${options.restUpstreamUrl}/rest/health` });
  app.addHook("onClose", async () => health.stop());

  await app.register(replyFrom, {
    base: options.restUpstreamUrl,
    undici: { connections: 64, pipelining: 1, keepAliveTimeout: 60_000 },
  });

  app.get("/mcp/healthcheck", async () => {
    const upstreams = health.snapshot();
    const up = !Object.values(upstreams).includes("DOWN");
    return {
      status: up ? "UP" : "DEGRADED",
      service: "imaging-services",
      details: { version: options.version, upstreams },
    };
  });

  // The REST API is forwarded as is: it authenticates callers itself.
  const forwardRest = (request: { url: string }, reply: { from: (url: string) => unknown }) =>
    reply.from(request.url);
  app.all("/rest", forwardRest);
  app.all("/rest/*", forwardRest);

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
