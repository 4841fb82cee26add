import { createServer, type Server } from "node:http";
import { registry } from "./metrics.ts";

/**
 * The internal listener Prometheus scrapes: `GET /metrics` in the text exposition format, nothing
 * else. It binds INTERNAL_BIND_ADDRESS (loopback by default), never the public port.
 */
export function createMetricsServer(): Server {
  return createServer((request, response) => {
    const path = (request.url ?? "").split("?")[0];
    if (path !== "/metrics" || (request.method !== "GET" && request.method !== "HEAD")) {
      response
        .writeHead(404, { "content-type": "text/plain; charset=utf-8" })
        .end("Not found: try GET /metrics\n");
      return;
    }
    registry.metrics().then(
      (text) => {
        response.writeHead(200, { "content-type": registry.contentType, "cache-control": "no-store" });
        response.end(request.method === "HEAD" ? undefined : text);
      },
      (error: unknown) => {
        response.writeHead(500, { "content-type": "text/plain; charset=utf-8" });
        response.end(`metrics could not be collected: ${(error as Error).message}\n`);
      },
    );
  });
}
