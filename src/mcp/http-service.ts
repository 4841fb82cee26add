import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { hostname, networkInterfaces } from "node:os";
import { toNodeHandler } from "@modelcontextprotocol/node";
import {
  DEFAULT_MAX_REQUEST_BODY_SIZE,
  hostHeaderValidationResponse,
  localhostAllowedHostnames,
  originValidationResponse,
} from "@modelcontextprotocol/server";
import { listenUrl } from "../config/listen-url.ts";
import { VERSION } from "../version.ts";
import { createDualEraHandler, jsonRpcErrorResponse } from "./dual-era-handler.ts";
import { serveParsedPost } from "./node-adapter.ts";
import { httpTransport, type InjectableApp, inProcessTransport } from "./rest-client.ts";
import { createMcpServer, MCP_SERVERS, type McpServerKind } from "./servers.ts";

/** The subset of a pino/Fastify logger the service uses. */
export interface McpServiceLogger {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
  error(object: object, message: string): void;
}

export interface McpServiceOptions {
  kind: McpServerKind;
  /** Address to listen on (internal: loopback by default in the platform). */
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** Base URL of the platform REST API the tools call. */
  restUrl: string;
  /**
   * The REST application when it runs in this process: the tools then call it in-process (Fastify
   * `inject`, through the same authentication and authorization) instead of over loopback HTTP.
   */
  restApp?: InjectableApp;
  /** MCP endpoint path; default `/mcp` (analysis) or `/mcp/gatekeeper` (gatekeeper). */
  path?: string;
  logger?: McpServiceLogger;
  /**
   * Extra hostnames (no port) accepted in the Host header, besides localhost, 127.0.0.1, [::1], the
   * listen address and this machine's hostname (DNS rebinding protection). A proxy that keeps the
   * client's Host header needs its public hostname here; one that rewrites Host (like the gateway's
   * reply-from) does not.
   */
  allowedHosts?: string[];
  /**
   * Extra origin hostnames (no scheme, no port) accepted in an Origin header, besides the allowed hosts.
   * Requests without Origin (every non-browser client) always pass.
   */
  allowedOrigins?: string[];
  /** Per REST call made by a tool. Default 30 s. */
  restTimeoutMs?: number;
  /** An idle 2025 session is closed after this long. Default 30 minutes. */
  sessionIdleMs?: number;
  /** How long close() waits for in-flight requests before cutting connections. Default 10 s. */
  closeGraceMs?: number;
  /**
   * At most this many MCP requests start per turn of the event loop; the others wait their turn, in order
   * of arrival. Default 8. Without a bound, one turn serves every request that is ready, and Node.js
   * (libuv ≥ 1.45) accepts one new connection per turn: under load a burst of new connections then waits
   * seconds to be accepted (docs/benchmarks.md, "MCP server").
   */
  startsPerTurn?: number;
}

export interface RunningMcpService {
  /** Base URL of the listener, e.g. http://127.0.0.1:8282 (the gateway's upstream). */
  url: string;
  /** Full URL of the MCP endpoint, e.g. http://127.0.0.1:8282/mcp. */
  endpoint: string;
  /**
   * Stops accepting, lets in-flight requests finish (until `deadline`, epoch ms, else `closeGraceMs`
   * from now), ends 2025 sessions and streams, then cuts what is left.
   */
  close(deadline?: number): Promise<void>;
  /**
   * Serves one request of the MCP endpoint on a connection another listener of this process accepted
   * (the gateway, after its checks): the same handling as a request to `url`, without the loopback hop.
   * `body`: the request's body when the caller has already read it (the request stream is then not read).
   */
  serve(req: IncomingMessage, res: ServerResponse, body?: Buffer): void;
}

const silentLogger: McpServiceLogger = { info() {}, warn() {}, error() {} };

/**
 * One MCP server (analysis or gatekeeper) as a standalone HTTP service: the MCP endpoint (both protocol
 * eras, see dual-era-handler.ts) and `GET /healthz`. It verifies no token: the gateway does, and the
 * REST API verifies the platform token the tools pass on.
 */
export async function startMcpService(options: McpServiceOptions): Promise<RunningMcpService> {
  const definition = MCP_SERVERS[options.kind];
  const path = options.path ?? definition.path;
  const logger = options.logger ?? silentLogger;
  const service = `mcp-${options.kind}`;
  const env = {
    transport: options.restApp ? inProcessTransport(options.restApp) : httpTransport(options.restUrl),
    ...(options.restTimeoutMs ? { restTimeoutMs: options.restTimeoutMs } : {}),
  };

  const allowedHosts = [
    ...localhostAllowedHostnames(),
    ...listenHostnames(options.host),
    ...(options.allowedHosts ?? []),
  ];
  const allowedOrigins = [...allowedHosts, ...(options.allowedOrigins ?? [])];

  const handler = createDualEraHandler({
    createServer: () => createMcpServer(options.kind, env),
    ...(options.sessionIdleMs ? { sessionIdleMs: options.sessionIdleMs } : {}),
    onError: (error) => logger.warn({ err: error, service }, "MCP request failed"),
  });

  const checkedFetch = async (request: Request, requestOptions?: { parsedBody?: unknown }) =>
    hostHeaderValidationResponse(request, allowedHosts) ??
    originValidationResponse(request, allowedOrigins) ??
    handler.fetch(request, requestOptions);
  const adapterError = (error: Error) =>
    logger.error({ err: error, service }, "MCP request could not be served");
  const mcp = toNodeHandler({ fetch: checkedFetch }, { onerror: adapterError });

  // Requests waiting for their turn (see startsPerTurn), oldest first.
  const startsPerTurn = Math.max(1, options.startsPerTurn ?? 8);
  const waiting: (() => unknown)[] = [];
  let turnScheduled = false;
  const nextTurn = () => {
    for (let started = 0; started < startsPerTurn && waiting.length > 0; started++) {
      (waiting.shift() as () => unknown)();
    }
    // setImmediate from the check phase runs in the next turn, after the poll phase (accepts, reads).
    if (waiting.length > 0) setImmediate(nextTurn);
    else turnScheduled = false;
  };
  const admit = (start: () => unknown): void => {
    waiting.push(start);
    if (!turnScheduled) {
      turnScheduled = true;
      setImmediate(nextTurn);
    }
  };

  let inFlight = 0;
  /** One request of the MCP endpoint, from this listener or handed over in-process (`serve`). */
  const serveEndpoint = (req: IncomingMessage, res: ServerResponse, body?: Buffer): void => {
    if (req.method !== "GET" && req.method !== "POST" && req.method !== "DELETE") {
      sendResponse(
        res,
        jsonRpcErrorResponse(405, -32000, "Method not allowed.", { allow: "GET, POST, DELETE" }),
      );
      return;
    }
    // Streams (GET) do not hold close() back: closing the sessions ends them.
    if (req.method !== "GET") {
      inFlight++;
      res.once("close", () => inFlight--);
    }
    if (req.method === "POST") void servePost(req, res, body);
    else void mcp(req, res);
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = req.url ?? "/";
    const requestPath = url.split("?")[0];
    if (requestPath === path) {
      serveEndpoint(req, res);
      return;
    }
    if (requestPath === "/healthz" && (req.method === "GET" || req.method === "HEAD")) {
      return sendJson(res, 200, {
        status: "UP",
        service,
        details: { version: VERSION, path, sessions: handler.sessionCount() },
      });
    }
    sendJson(res, 404, {
      error: "not_found",
      error_description: `No such resource: ${req.method} ${requestPath}`,
    });
  });
  /**
   * A POST's body is read and parsed once, here: the SDK then takes the parsed message (for the era
   * routing, the 2026 handler and the 2025 transport alike) instead of cloning and parsing the body
   * again at each step. A body that is not JSON goes to the SDK as it came, for its own error answer.
   */
  async function servePost(req: IncomingMessage, res: ServerResponse, read?: Buffer): Promise<void> {
    const body =
      read && read.length > DEFAULT_MAX_REQUEST_BODY_SIZE
        ? TOO_LARGE
        : (read ?? (await readBody(req, DEFAULT_MAX_REQUEST_BODY_SIZE).catch(() => undefined)));
    if (body === undefined) {
      if (!res.headersSent) res.destroy();
      return;
    }
    if (body === TOO_LARGE) {
      const text = JSON.stringify({
        jsonrpc: "2.0",
        error: {
          code: -32000,
          message: `Payload Too Large: Request body must not exceed ${DEFAULT_MAX_REQUEST_BODY_SIZE} bytes`,
        },
        id: null,
      });
      res.writeHead(413, { "content-type": "application/json", connection: "close" });
      res.end(text);
      return;
    }
    let parsed: unknown;
    try {
      parsed = body.length > 0 ? JSON.parse(body.toString("utf8")) : undefined;
    } catch {
      parsed = undefined;
    }
    if (parsed !== undefined)
      return admit(() => serveParsedPost(checkedFetch, req, res, parsed, adapterError));
    const replay = {
      method: req.method,
      url: req.url,
      headers: req.headers,
      async *[Symbol.asyncIterator]() {
        if (body.length > 0) yield body;
      },
    };
    return mcp(replay as IncomingMessage, res);
  }

  // SSE streams stay open as long as the client wants them.
  server.requestTimeout = 0;
  server.keepAliveTimeout = 65_000;

  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(options.port, options.host, () => {
        server.off("error", reject);
        resolve();
      });
    });
  } catch (error) {
    // EADDRINUSE and the like reach the caller as they are, with nothing left running.
    await handler.close();
    throw error;
  }
  const url = listenUrl(server.address());
  logger.info({ service, url: `${url}${path}` }, "MCP server listening");

  let closing: Promise<void> | undefined;
  const close = (deadline = Date.now() + (options.closeGraceMs ?? 10_000)) => {
    closing ??= (async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Keep-alive connections go as soon as they are idle (close() closes only those idle right now).
      while (inFlight > 0 && Date.now() < deadline) {
        server.closeIdleConnections();
        await new Promise((r) => setTimeout(r, 25));
      }
      await handler.close();
      server.closeAllConnections();
      await closed;
    })();
    return closing;
  };
  return { url, endpoint: `${url}${path}`, close, serve: serveEndpoint };
}

const TOO_LARGE = Symbol("too large");

/** The request body, or TOO_LARGE past `max` bytes (the SDK's bound, answered 413 like the SDK does). */
async function readBody(req: IncomingMessage, max: number): Promise<Buffer | typeof TOO_LARGE> {
  if (Number(req.headers["content-length"]) > max) return TOO_LARGE;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > max) return TOO_LARGE;
    chunks.push(chunk);
  }
  return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(res.req.method === "HEAD" ? undefined : text);
}

function sendResponse(res: ServerResponse, response: Response): void {
  void response.text().then((text) => {
    res.writeHead(response.status, Object.fromEntries(response.headers));
    res.end(text);
  });
}

/** Hostnames a client may legitimately use to reach this listener, beyond the loopback names. */
function listenHostnames(host: string): string[] {
  const bracket = (address: string) => (address.includes(":") ? `[${address}]` : address);
  const names = [hostname().toLowerCase()];
  if (host === "0.0.0.0" || host === "::" || host === "") {
    // Reachable on every local address: an IP literal in Host is no DNS rebinding.
    for (const list of Object.values(networkInterfaces())) {
      for (const entry of list ?? []) names.push(bracket(entry.address.split("%")[0] ?? entry.address));
    }
  } else {
    names.push(bracket(host).toLowerCase());
  }
  return names;
}
