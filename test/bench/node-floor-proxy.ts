/**
 * The floor of a Node.js hop, for the gateway benchmark: a bare node:http server that forwards every
 * request to one upstream with the gateway's own forwarding code (src/gateway/upstream-stream.ts,
 * undici's dispatcher, the same pool settings), and checks nothing — no Fastify, no origin, token,
 * exchange or session. The gateway's CPU per request minus this one is what its framework and checks
 * cost; this one against nginx is what Node.js's HTTP stack costs.
 *
 * Run as a child process: `node test/bench/node-floor-proxy.ts <port> <upstream URL>`; prints
 * "listening <url>" once it accepts connections, stops on SIGTERM.
 */
import { createServer } from "node:http";
import { Pool } from "undici";
import { forwardableRequestHeaders } from "../../src/gateway/hop-by-hop.ts";
import { forwardStreaming } from "../../src/gateway/upstream-stream.ts";

const [portArg, upstreamUrl] = process.argv.slice(2);
if (!portArg || !upstreamUrl) throw new Error("usage: node-floor-proxy.ts <port> <upstream URL>");
const upstream = new Pool(upstreamUrl, {
  connections: 128,
  pipelining: 1,
  keepAliveTimeout: 60_000,
  headersTimeout: 300_000,
  bodyTimeout: 0,
});
const upstreamHost = new URL(upstreamUrl).host;
const SET_HERE: ReadonlySet<string> = new Set(["host", "content-length"]);

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    const headers: Record<string, string | string[] | undefined> = forwardableRequestHeaders(
      req.headers,
      SET_HERE,
    );
    headers.host = upstreamHost;
    forwardStreaming(
      upstream,
      {
        method: req.method ?? "GET",
        path: req.url ?? "/",
        headers,
        body: chunks.length === 0 ? undefined : chunks.length === 1 ? chunks[0] : Buffer.concat(chunks),
      },
      res,
      {
        onHeaders: (_status, upstreamHeaders) => {
          const outgoing: Record<string, string | string[] | undefined> = {};
          for (const name in upstreamHeaders) {
            if (name !== "connection" && name !== "keep-alive" && name !== "transfer-encoding")
              outgoing[name] = upstreamHeaders[name];
          }
          return outgoing;
        },
        onError: (error) => {
          res.writeHead(502, { "content-type": "text/plain" });
          res.end(error.message);
        },
      },
    );
  });
});
server.keepAliveTimeout = 65_000;
server.listen(Number(portArg), "127.0.0.1", () => {
  process.stdout.write(`listening http://127.0.0.1:${portArg}\n`);
});
process.once("SIGTERM", () => {
  server.close();
  server.closeAllConnections();
  void upstream.destroy().then(() => process.exit(0));
});
