import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders, ServerResponse } from "node:http";
import type { McpDirectEntry } from "./mcp-resources.ts";
import type { Forward, ForwardedRequest, ForwardHooks } from "./upstream-stream.ts";

/**
 * The hand-over of one `/mcp` request to the MCP server of this process (the default `imaging start`),
 * after every check of the gateway: the client's request, its headers replaced by those the HTTP hop
 * would send (the exchanged token, Host naming the MCP server...) and its body as the gateway read it,
 * goes to the MCP server's request entry, which writes its answer straight to the client's response.
 * The answer's status and headers pass through `hooks.onHeaders` as an upstream answer's do (session
 * binding, hop-by-hop headers dropped, CORS headers added), so the client gets what the HTTP hop gave it;
 * the answer is then written once, instead of to a loopback socket, parsed by undici and written again.
 * A client that goes away closes the response, which the MCP server's adapter watches as over a socket.
 */
export function forwardMcpDirect(
  entry: McpDirectEntry,
  forward: Forward,
  req: IncomingMessage,
  res: ServerResponse,
  hooks: ForwardHooks,
): ForwardedRequest {
  // The length of the body passed on, as undici sets it on the HTTP hop. `forward.headers` is the hop's
  // own copy of the client's headers (built per request by mcp-proxy.ts): set in place, not copied again.
  const headers = forward.headers;
  if (forward.body) headers["content-length"] = String(forward.body.length);
  req.headers = headers as IncomingHttpHeaders;
  const raw: string[] = [];
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const item of value) raw.push(name, item);
    else raw.push(name, value);
  }
  req.rawHeaders = raw;

  // Every way the MCP server writes its head (writeHead, or a write that implies it) calls writeHead: the
  // first call is where the upstream's headers "arrive".
  const writeHead = res.writeHead;
  res.writeHead = function interceptedHead(
    this: ServerResponse,
    statusCode: number,
    ...rest: unknown[]
  ): ServerResponse {
    res.writeHead = writeHead;
    const given = rest.find((arg) => typeof arg === "object" && arg !== null && !Array.isArray(arg)) as
      | OutgoingHttpHeaders
      | undefined;
    // The headers set on the response, then those given to writeHead (which win), as one upstream answer's;
    // read in place rather than through merged copies (this runs on every request).
    const upstream: IncomingHttpHeaders = {};
    const take = (name: string, value: unknown) => {
      if (value !== undefined)
        upstream[name.toLowerCase()] = Array.isArray(value) ? value.map(String) : String(value);
    };
    for (const name of res.getHeaderNames()) {
      take(name, res.getHeader(name));
      res.removeHeader(name);
    }
    if (given) for (const name in given) take(name, given[name]);
    const outgoing = hooks.onHeaders(statusCode, upstream);
    if (outgoing === undefined) {
      res.destroy();
      return res;
    }
    return writeHead.call(res, statusCode, outgoing);
  } as ServerResponse["writeHead"];

  try {
    entry(req, res, forward.body);
  } catch (error) {
    res.writeHead = writeHead;
    if (res.headersSent) res.destroy();
    else hooks.onError(error instanceof Error ? error : new Error(String(error)));
  }
  return {
    end() {
      if (res.writableEnded || res.destroyed) return;
      // A stream that has begun ends cleanly for the client (as the HTTP hop ends it); the MCP server's
      // adapter then sees its response closed, as when a client leaves. One not begun yet is cut.
      if (!res.headersSent) {
        res.destroy();
        return;
      }
      // An event the server sends before it sees the close would be a write after the end: dropped.
      res.on("error", () => {});
      res.end();
    },
  };
}
