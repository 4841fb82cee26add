import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { EmbeddedIdp } from "./embedded-idp.ts";

/**
 * A gateway plugin serving the embedded identity provider at its issuer path: requests are handed to
 * the provider untouched (bodies unread, so it parses them itself), with the X-Forwarded-* headers
 * set from base_url and the connection.
 */
export function identityProviderRoutes(idp: EmbeddedIdp) {
  return async function identityProvider(app: FastifyInstance): Promise<void> {
    app.removeAllContentTypeParsers();
    app.addContentTypeParser("*", (_request, _payload, done) => done(null, undefined));
    const handler = (request: FastifyRequest, reply: FastifyReply) => {
      reply.hijack();
      idp.handle(request.raw, reply.raw, request.socket.remoteAddress ?? "");
    };
    app.all(idp.issuerPath, handler);
    app.all(`${idp.issuerPath}/*`, handler);
  };
}
