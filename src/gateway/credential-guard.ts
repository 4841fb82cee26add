import type { FastifyInstance } from "fastify";
import { repeatedCredentialHeader, repeatedHeaderDetail } from "../auth/credential-headers.ts";
import { bearerChallenge, type McpResource } from "./mcp-resources.ts";

/**
 * Refuses, on every route, a request sending a credential header twice (400): the gateway and the
 * service behind it would otherwise each read one of them. The answer speaks each route's language:
 * problem+json for the REST API, a Bearer challenge on the MCP routes, an OAuth error elsewhere.
 */
export function guardCredentialHeaders(
  app: FastifyInstance,
  options: { baseUrl: string; resources: readonly McpResource[] },
): void {
  // A callback hook, not an async one: it runs on every request and almost always passes.
  app.addHook("onRequest", (request, reply, done) => {
    const repeated = repeatedCredentialHeader(request.raw.rawHeaders);
    if (!repeated) return done();
    const detail = repeatedHeaderDetail(repeated);
    const path = request.url.split("?")[0] ?? "";
    if (path === "/rest" || path.startsWith("/rest/")) {
      reply
        .code(400)
        .type("application/problem+json")
        .send(
          JSON.stringify({ type: "about:blank", title: "Bad Request", status: 400, detail, instance: path }),
        );
      return;
    }
    const resource = options.resources.find((r) => r.path === path);
    if (resource) {
      reply.header(
        "www-authenticate",
        bearerChallenge(options.baseUrl, resource, { error: "invalid_request", description: detail }),
      );
    }
    reply.code(400).type("application/json").send({ error: "invalid_request", error_description: detail });
  });
}
