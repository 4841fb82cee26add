import { STATUS_CODES } from "node:http";
import { errorCodes, type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import { upstreamTraceparent } from "../observability/trace-context.ts";
import { forwardableRequestHeaders } from "./hop-by-hop.ts";
import { gatewayProblem } from "./problem.ts";

/** The REST application of this process, as the gateway uses it: its request listener. */
export type DirectRestApp = Pick<FastifyInstance, "routing">;

export interface DirectRestHooks {
  /** The REST API answered (it is up). */
  answered(): void;
  /** The REST API could not take the request at all. */
  failed(error: Error): void;
}

/**
 * Leaves request bodies unread in this scope, for the REST application to read from the client's own
 * stream (its routes' limits and parsers, as over HTTP). A body whose announced length is over the
 * gateway's limit is refused here, as the gateway's buffering parser refuses it (raw-body.ts).
 */
export function leaveBodiesUnread(scope: FastifyInstance, bodyLimit: number): void {
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser("*", (request, _payload, done) => {
    const length = Number(request.headers["content-length"]);
    if (length > bodyLimit) return done(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE(), undefined);
    done(null, undefined);
  });
}

/**
 * The `/rest` route when the REST API runs in this process: after the gateway's own checks, the client's
 * request and response go to the REST application's request listener (Fastify `routing`), which writes
 * its answer straight to the client's socket. The page is then serialized and written once, instead of
 * written to a loopback socket, parsed by the gateway's HTTP client and written again (docs/benchmarks.md,
 * "Occurrences over HTTP"). The REST application sees what it would see over HTTP: hop-by-hop headers
 * dropped, a `traceparent` naming the gateway's hop (so its request id and log lines are the gateway's),
 * the body unread; it runs its own routing, authentication, limits, compression, problem+json errors,
 * access-log lines and metrics, and a client that goes away closes its request as over a socket. The
 * gateway's access-log line and metrics still come when the answer is finished (Fastify listens on the
 * response from the start, hijacked or not).
 */
export function forwardRestDirect(app: DirectRestApp, hooks: DirectRestHooks) {
  return (request: FastifyRequest, reply: FastifyReply): void => {
    const raw = request.raw;
    raw.headers = {
      ...forwardableRequestHeaders(raw.headers),
      traceparent: upstreamTraceparent(request.id, raw.headers.traceparent),
    };
    reply.hijack();
    const res = reply.raw;
    res.once("finish", hooks.answered);
    try {
      app.routing(raw, res);
    } catch (error) {
      res.removeListener("finish", hooks.answered);
      hooks.failed(error as Error);
      if (res.headersSent) {
        res.destroy();
        return;
      }
      const body = JSON.stringify(
        gatewayProblem(502, "The REST API cannot be reached: try again shortly", request.url.split("?")[0]),
      );
      res.writeHead(502, STATUS_CODES[502], {
        "content-type": "application/problem+json",
        "content-length": Buffer.byteLength(body),
      });
      res.end(body);
    }
  };
}
