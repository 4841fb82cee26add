import type { FastifyInstance, FastifyRequest } from "fastify";

/**
 * Keeps request bodies as received in this scope: the upstream service parses them and answers its
 * own errors (problem+json, JSON-RPC), so the gateway never rejects or re-encodes a body itself.
 */
export function keepRawBodies(scope: FastifyInstance, bodyLimit = 4 * 1024 * 1024): void {
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser("*", { parseAs: "buffer", bodyLimit }, (_request, body, done) =>
    done(null, body),
  );
}

/** reply-from options that send the raw body with its own content type instead of JSON-encoding it. */
export function rawBodyOptions(request: FastifyRequest): { body?: Buffer; contentType?: string } {
  return Buffer.isBuffer(request.body)
    ? { body: request.body, contentType: request.headers["content-type"] ?? "application/octet-stream" }
    : {};
}
