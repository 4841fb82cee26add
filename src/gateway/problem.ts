import { STATUS_CODES } from "node:http";
import type { FastifyReply } from "fastify";

/**
 * RFC 9457 problem details for the errors the gateway answers itself on the REST API's paths (an
 * unreachable REST API, a body or URL too large, a malformed request): the same shape and media type
 * as the REST API's own errors (src/rest/problem.ts), so clients handle one error format.
 */
export function gatewayProblem(status: number, detail: string, instance?: string) {
  return {
    type: "about:blank",
    title: STATUS_CODES[status] ?? "Error",
    status,
    detail,
    ...(instance ? { instance } : {}),
  };
}

// Any server flavour: reply-from's error callback types its reply as HTTP/1 or HTTP/2.
// biome-ignore lint/suspicious/noExplicitAny: the generic parameters do not matter here
type AnyReply = FastifyReply<any, any, any, any>;

export function sendGatewayProblem<R extends AnyReply>(reply: R, status: number, detail: string): R {
  const body = gatewayProblem(status, detail, reply.request.url.split("?")[0]);
  return reply.code(status).type("application/problem+json").send(JSON.stringify(body)) as R;
}
