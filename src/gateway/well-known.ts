import type { FastifyInstance, FastifyReply } from "fastify";
import { type McpResource, protectedResourceMetadata } from "./mcp-resources.ts";

export interface WellKnownOptions {
  baseUrl: string;
  issuer: string;
  resources: readonly McpResource[];
  registrationEndpoint?: string | undefined;
}

const notFound = (reply: FastifyReply, path: string) =>
  reply
    .code(404)
    .header("access-control-allow-origin", "*")
    .type("application/json")
    .send({ error: "not_found", error_description: `Nothing is published at ${path}` });

/**
 * Protected resource metadata, the redirects of the discovery URLs clients probe, and JSON (never
 * HTML) for every other well-known path and /register: HTML there is what makes clients fail with
 * "Unrecognized token '<'". With dynamic client registration on, /register (where clients of the
 * 2025-03-26 MCP specification register when they find no metadata) leads to the issuer's
 * registration endpoint with a 307, so the POST and its body are repeated there.
 */
export function wellKnownRoutes(app: FastifyInstance, options: WellKnownOptions): void {
  const issuerPath = new URL(options.issuer).pathname.replace(/\/$/, "");

  for (const resource of options.resources) {
    app.get(`/.well-known/oauth-protected-resource${resource.path}`, async (_request, reply) =>
      reply
        .header("cache-control", "public, max-age=300")
        .header("access-control-allow-origin", "*")
        .send(protectedResourceMetadata(options.baseUrl, options.issuer, resource)),
    );
  }

  const oauthDocument = `${options.issuer}/.well-known/oauth-authorization-server`;
  const oidcDocument = `${options.issuer}/.well-known/openid-configuration`;
  const redirects = new Map<string, string>();
  // Path-inserted probes for the issuer (RFC 8414 section 3.1 and its OIDC counterpart).
  if (issuerPath) {
    redirects.set(`/.well-known/oauth-authorization-server${issuerPath}`, oauthDocument);
    redirects.set(`/.well-known/openid-configuration${issuerPath}`, oidcDocument);
  }
  // Clients without a PRM take the MCP URL (or the root) for the issuer and probe these.
  for (const path of ["", ...options.resources.map((r) => r.path)]) {
    redirects.set(`/.well-known/oauth-authorization-server${path}`, oauthDocument);
    redirects.set(`/.well-known/openid-configuration${path}`, oidcDocument);
    if (path) redirects.set(`${path}/.well-known/openid-configuration`, oidcDocument);
    if (path) redirects.set(`${path}/.well-known/oauth-authorization-server`, oauthDocument);
  }
  for (const [path, target] of redirects) {
    app.get(path, async (_request, reply) =>
      reply
        .header("access-control-allow-origin", "*")
        .header("cache-control", "no-store")
        .redirect(target, 302),
    );
  }

  app.all("/.well-known/*", async (request, reply) => notFound(reply, request.url.split("?")[0] ?? ""));
  const registrationEndpoint = options.registrationEndpoint;
  if (registrationEndpoint) {
    app.all("/register", async (_request, reply) =>
      reply.header("cache-control", "no-store").redirect(registrationEndpoint, 307),
    );
    return;
  }
  app.all("/register", async (_request, reply) =>
    reply.code(404).type("application/json").send({
      error: "not_found",
      error_description:
        "Dynamic client registration is not offered: clients identify themselves with a client ID metadata document",
    }),
  );
}
