import type { FastifyInstance } from "fastify";
import { httpRequestDuration, httpRequests } from "./metrics.ts";

/**
 * Counts and times every answer of a Fastify listener by route pattern (`/rest/applications/:name`,
 * never the raw URL, so the label stays bounded); requests no route matched share `(unmatched)`.
 */
export function recordHttpMetrics(app: FastifyInstance, listener: string): void {
  // A callback hook, not an async one: it runs after every answer, and a promise per request shows up
  // in the gateway's CPU per proxied request (issue 18).
  app.addHook("onResponse", (request, reply, done) => {
    const labels = {
      listener,
      method: request.method,
      route: request.routeOptions.url ?? "(unmatched)",
      status: String(reply.statusCode),
    };
    httpRequests.inc(labels);
    httpRequestDuration.observe(labels, reply.elapsedTime / 1000);
    done();
  });
}
