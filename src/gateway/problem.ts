import { STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import type { ConnectionError, FastifyReply } from "fastify";
import { problemDetails } from "../contracts/problem-details.ts";

/**
 * RFC 9457 problem details for the errors the gateway answers itself on the REST API's paths (an
 * unreachable REST API, a body or URL too large, a malformed request): built as the REST API's own
 * errors are (src/contracts/problem-details.ts), so clients handle one error format.
 */
export const gatewayProblem = problemDetails;

// Any server flavour: reply-from's error callback types its reply as HTTP/1 or HTTP/2.
// biome-ignore lint/suspicious/noExplicitAny: the generic parameters do not matter here
type AnyReply = FastifyReply<any, any, any, any>;

export function sendGatewayProblem<R extends AnyReply>(reply: R, status: number, detail: string): R {
  const body = gatewayProblem(status, detail, reply.request.url.split("?")[0]);
  return reply.code(status).type("application/problem+json").send(JSON.stringify(body)) as R;
}

/**
 * Requests Node.js cannot parse never reach a route: a request line or headers over the limit, bad
 * syntax, a client too slow. Answered as nginx does (414 for an over-long request line, 431 for the
 * headers, 400, 408), with problem+json, and the connection closed.
 */
export function answerClientError(error: ConnectionError, socket: Socket): void {
  if (error.code === "ECONNRESET" || socket.destroyed) return;
  let status = 400;
  let detail = "The request is not valid HTTP";
  if (error.code === "ERR_HTTP_REQUEST_TIMEOUT") {
    status = 408;
    detail = "The request was not received in time";
  } else if (error.code === "HPE_HEADER_OVERFLOW") {
    // Node.js passes the bytes received as a Buffer (typed as its JSON form). As nginx, a request line
    // over 8 KiB is a URI too long; otherwise the header fields are too large.
    const received = error.rawPacket as unknown as Buffer | undefined;
    const lineEnd = received?.indexOf("\r\n") ?? 0;
    const firstLineEnded = lineEnd !== -1 && lineEnd <= 8 * 1024;
    status = firstLineEnded ? 431 : 414;
    detail = firstLineEnded ? "The request headers are too large" : "The request target (URL) is too long";
  }
  const body = JSON.stringify(gatewayProblem(status, detail));
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}
