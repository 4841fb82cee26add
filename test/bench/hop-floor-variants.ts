/**
 * The hop's floor taken apart, for `npm run bench:gateway:floor`: one Node.js process per layer of a
 * proxy, each adding one layer to the one before, so that the difference of two measures that layer.
 *
 * - `net`: node:net, one canned HTTP answer written per read — the event loop and the socket system
 *   calls only, no HTTP parser (valid only for requests that arrive in one read, as the benchmark's do);
 * - `http`: node:http, the body read, the same canned answer — Node's HTTP server (llhttp,
 *   IncomingMessage, ServerResponse), no upstream;
 * - `undici`: the bare proxy of the gateway benchmark (node:http + undici's dispatcher through the
 *   gateway's own forwarding code, src/gateway/upstream-stream.ts), to the upstream over TCP;
 * - `undici-unix`: the same, to the upstream over a Unix socket (a co-located upstream);
 * - `agent`: node:http's own client (keep-alive Agent) instead of undici, over TCP.
 *
 * Run as a child: `node test/bench/hop-floor-variants.ts <variant> <port> <host:port | /unix/socket>`;
 * prints "listening" once it accepts connections, exits on SIGTERM.
 */
import { Agent, createServer as createHttpServer, request as httpRequest } from "node:http";
import { createServer as createNetServer, type Server } from "node:net";
import { Pool } from "undici";
import { forwardableRequestHeaders, forwardableResponseHeaders } from "../../src/gateway/hop-by-hop.ts";
import { forwardStreaming } from "../../src/gateway/upstream-stream.ts";

const [variant, portArg, upstreamArg] = process.argv.slice(2);
if (!variant || !portArg || !upstreamArg)
  throw new Error("usage: hop-floor-variants.ts <variant> <port> <host:port | /unix/socket>");
/** The canned answer of `net` and `http`: the upstream's (HOP_FLOOR_BODY, set by the benchmark). */
const BODY = Buffer.from(process.env.HOP_FLOOR_BODY ?? "{}");
const SET_HERE: ReadonlySet<string> = new Set(["host", "content-length"]);
const unix = upstreamArg.startsWith("/");

function readBody(req: import("node:http").IncomingMessage, then: (body: Buffer | undefined) => void) {
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () =>
    then(chunks.length === 0 ? undefined : chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)),
  );
}

let server: Server;
if (variant === "net") {
  const answer = Buffer.concat([
    Buffer.from(
      `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${BODY.length}\r\n\r\n`,
    ),
    BODY,
  ]);
  server = createNetServer((socket) => {
    socket.on("error", () => {});
    socket.on("data", () => socket.write(answer));
  });
} else if (variant === "http") {
  server = createHttpServer((req, res) =>
    readBody(req, () => {
      res.writeHead(200, { "content-type": "application/json", "content-length": BODY.length });
      res.end(BODY);
    }),
  );
} else if (variant === "agent") {
  const agent = new Agent({ keepAlive: true, maxSockets: 128 });
  const [host, port] = upstreamArg.split(":");
  server = createHttpServer((req, res) =>
    readBody(req, (body) => {
      const headers: Record<string, string | string[] | number | undefined> = forwardableRequestHeaders(
        req.headers,
        SET_HERE,
      );
      headers["content-length"] = body?.length ?? 0;
      const upstream = httpRequest(
        { agent, host, port: Number(port), method: req.method, path: req.url, headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, forwardableResponseHeaders(answer.headers));
          answer.pipe(res);
        },
      );
      upstream.on("error", (error) => {
        res.writeHead(502, { "content-type": "text/plain" });
        res.end(error.message);
      });
      upstream.end(body);
    }),
  );
} else if (variant === "undici" || variant === "undici-unix") {
  const options = { connections: 128, pipelining: 1, keepAliveTimeout: 60_000, bodyTimeout: 0 };
  const upstream = unix
    ? new Pool("http://localhost", { ...options, socketPath: upstreamArg })
    : new Pool(`http://${upstreamArg}`, options);
  const upstreamHost = unix ? "localhost" : upstreamArg;
  server = createHttpServer((req, res) =>
    readBody(req, (body) => {
      const headers: Record<string, string | string[] | undefined> = forwardableRequestHeaders(
        req.headers,
        SET_HERE,
      );
      headers.host = upstreamHost;
      forwardStreaming(upstream, { method: req.method ?? "GET", path: req.url ?? "/", headers, body }, res, {
        onHeaders: (_status, upstreamHeaders) => forwardableResponseHeaders(upstreamHeaders),
        onError: (error) => {
          res.writeHead(502, { "content-type": "text/plain" });
          res.end(error.message);
        },
      });
    }),
  );
} else {
  throw new Error(`unknown variant ${variant}`);
}
if ("keepAliveTimeout" in server) (server as { keepAliveTimeout: number }).keepAliveTimeout = 65_000;
server.listen(Number(portArg), "127.0.0.1", () => process.stdout.write("listening\n"));
process.once("SIGTERM", () => process.exit(0));
