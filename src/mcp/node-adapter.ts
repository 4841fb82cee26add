import type { IncomingMessage, ServerResponse } from "node:http";

/**
 * The Node.js side of a POST whose body the service has already read and parsed (http-service.ts): the
 * same conversion as the SDK's `toNodeHandler`, minus two costs it has on the hot path of every tool call:
 *
 * - the web `Request` gets no body: the SDK takes the parsed message (`parsedBody`) at every step, so
 *   `toNodeHandler`'s re-serialization of it (JSON.stringify, UTF-8 encoding, a body stream) is never read;
 * - the answer leaves in one socket write: a JSON answer is complete when the SDK hands it over and is
 *   sent whole with its Content-Length; an SSE stream's socket is corked from the head to the end of the
 *   body, so head, event and chunked terminator go out together instead of in two or three writes. A
 *   stream that stays open (a 2025-era POST stream with notifications) is uncorked after each turn, so
 *   nothing waits.
 *
 * A client that leaves aborts the request's signal, as with `toNodeHandler`.
 */
export type WebHandler = (request: Request, options: { parsedBody: unknown }) => Promise<Response>;

export async function serveParsedPost(
  handler: WebHandler,
  req: IncomingMessage,
  res: ServerResponse,
  parsedBody: unknown,
  onError: (error: Error) => void,
): Promise<void> {
  let finished = false;
  const abort = new AbortController();
  res.on("close", () => {
    if (!finished) abort.abort();
  });
  if (res.destroyed) abort.abort();
  let response: Response;
  try {
    response = await handler(webRequest(req, abort.signal), { parsedBody });
  } catch (error) {
    onError(error instanceof Error ? error : new Error(String(error)));
    response = Response.json(
      { jsonrpc: "2.0", error: { code: -32603, message: "Internal server error" }, id: null },
      { status: 500 },
    );
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of response.headers) headers[name] = value;
  if (response.body === null || res.destroyed) {
    finished = true;
    res.writeHead(response.status, headers).end();
    return;
  }
  if (!isEventStream(headers)) {
    // A JSON answer (every 2026-era tools/call) is complete once the SDK hands it over: sent whole with
    // its length, in one write, without the streaming machinery below.
    let body: Uint8Array;
    try {
      body = await response.bytes();
    } catch {
      finished = true;
      res.destroy();
      return;
    }
    finished = true;
    headers["content-length"] = String(body.byteLength);
    res.writeHead(response.status, headers).end(body);
    return;
  }
  // The socket is corked, not the response: ServerResponse's own cork() re-frames the buffered chunks.
  const socket = res.socket;
  socket?.cork();
  const uncork = () => {
    while (socket && socket.writableCorked > 0) socket.uncork();
  };
  let uncorkScheduled = false;
  const uncorkLater = () => {
    if (uncorkScheduled) return;
    uncorkScheduled = true;
    setImmediate(() => {
      uncorkScheduled = false;
      if (!finished) uncork();
    });
  };
  res.writeHead(response.status, headers);
  let drained: (() => void) | undefined;
  const onDrain = () => {
    drained?.();
    drained = undefined;
  };
  res.on("drain", onDrain);
  let closed: Promise<void> | undefined;
  try {
    for await (const chunk of response.body) {
      if (abort.signal.aborted) break;
      const ok = res.write(chunk);
      uncorkLater();
      if (!ok) {
        uncork();
        closed ??= new Promise<void>((resolve) =>
          abort.signal.aborted ? resolve() : abort.signal.addEventListener("abort", () => resolve()),
        );
        await Promise.race([new Promise<void>((resolve) => (drained = resolve)), closed]);
      }
    }
  } catch {
    // The body's stream failed or was cancelled: end what was sent, as toNodeHandler does.
  }
  finished = true;
  res.off("drain", onDrain);
  // end() uncorks fully: head, body and terminator leave in one write.
  res.end();
}

const isEventStream = (headers: Record<string, string>) =>
  (headers["content-type"] ?? "").includes("text/event-stream");

/** A web `Request` carrying the Node request's method, URL and headers, without its (already read) body. */
function webRequest(req: IncomingMessage, signal: AbortSignal): Request {
  const host = req.headers.host ?? "localhost";
  const headers = new Headers();
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    const name = (raw[i] as string).toLowerCase();
    // The body is not passed on, so neither are the headers that describe it.
    if (name === "content-length" || name === "transfer-encoding" || name === "content-encoding") continue;
    headers.append(name, raw[i + 1] as string);
  }
  return new Request(`http://${host}${req.url ?? "/"}`, { method: req.method ?? "POST", headers, signal });
}
