import { randomUUID } from "node:crypto";
import {
  type AuthInfo,
  createMcpHandler,
  isInitializeRequest,
  isLegacyRequest,
  type McpServer,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";
import { bearerToken } from "../auth/bearer.ts";
import { createSessionEventStore, type SessionEventStore } from "./session-event-store.ts";

/**
 * One MCP endpoint serving both protocol eras from one server factory:
 *
 * - 2026-07-28 (requests carrying the per-request `_meta` envelope, `server/discover`): the SDK's
 *   `createMcpHandler` in strict mode, a fresh server per request, nothing kept between requests.
 * - 2025 (`initialize` handshake): sessions. `initialize` opens a session (`Mcp-Session-Id`) served by
 *   its own server and streamable HTTP transport; later POSTs, the GET stream and DELETE name it.
 *
 * Routing follows the SDK's own classification (`isLegacyRequest`), so this composition and the SDK
 * can never disagree about a request's era. GET and DELETE without a session id are 2026-style
 * requests to a stateless endpoint: 405.
 *
 * The handler verifies no token: it passes the request's bearer token through to the tools as
 * `authInfo`, per request (a session never stands in for credentials; a token refreshed mid-session
 * is the one the next call uses).
 *
 * GET streams of a session, as the transport specification allows them: a client "MAY remain connected to
 * multiple SSE streams simultaneously", so a second GET is served a stream beside the first (the SDK's,
 * which carries the server's messages; each message goes on one stream only) instead of the SDK's 409,
 * which Gemini CLI showed as "Failed to open SSE stream: Conflict" at every start. A resumption
 * (Last-Event-ID) of a stream that has ended, with nothing left to replay, is answered 405 ("no stream
 * offered here") rather than an empty stream that closes at once: older SDK clients (Gemini CLI's)
 * resume every POST stream that carried an event id, and reopen a closed one as a new GET, so each tool
 * call would otherwise leave one more open stream behind.
 */
export interface DualEraHandlerOptions {
  /** Builds a server with the tools registered; called per modern request and per 2025 session. */
  createServer: () => McpServer;
  /** A 2025 session with no request for this long is closed. Default 30 minutes. */
  sessionIdleMs?: number;
  /** At most this many 2025 sessions at once; the least recently used idle one makes room. */
  maxSessions?: number;
  onError?: (error: Error) => void;
}

export interface DualEraHandler {
  /** `parsedBody`: the POST body already parsed (the request's own body is then not read again). */
  fetch(request: Request, options?: { parsedBody?: unknown }): Promise<Response>;
  /** Open 2025 sessions (for health and tests). */
  sessionCount(): number;
  close(): Promise<void>;
}

interface Session {
  transport: WebStandardStreamableHTTPServerTransport;
  server: McpServer;
  events: SessionEventStore;
  lastUsed: number;
  /** Requests being served, the open GET streams included: such a session is never idle. */
  active: number;
  /** POSTs whose answer has not ended: while one is, a resumption is left to the SDK. */
  postsInFlight: number;
  /** Closers of the GET streams served beside the SDK's own, oldest first. */
  extraStreams: Set<() => void>;
}

/** GET streams of one session beside the SDK's: a new one beyond this closes the oldest (replaces it). */
const MAX_EXTRA_GET_STREAMS = 7;
const KEEPALIVE_MS = 15_000;

const JSON_HEADERS = { "content-type": "application/json" };
/** The SSE `retry` a 2025 client waits before reconnecting to a stream it lost (EventSource's order of magnitude). */
export const SSE_RETRY_MS = 1_000;

export function jsonRpcErrorResponse(
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
): Response {
  return new Response(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }), {
    status,
    headers: { ...JSON_HEADERS, ...headers },
  });
}

/** The bearer token of the request as pass-through auth info (not verified here). */
export function bearerAuthInfo(request: Request): AuthInfo | undefined {
  const token = bearerToken(request.headers.get("authorization"));
  if (!token) return undefined;
  // The request's traceparent rides along, so that the tools' REST calls carry it on.
  const traceparent = request.headers.get("traceparent");
  return { token, clientId: "", scopes: [], ...(traceparent ? { extra: { traceparent } } : {}) };
}

export function createDualEraHandler(options: DualEraHandlerOptions): DualEraHandler {
  const idleMs = options.sessionIdleMs ?? 30 * 60_000;
  const maxSessions = options.maxSessions ?? 1000;
  const onError = options.onError ?? (() => {});
  const sessions = new Map<string, Session>();
  let closed = false;

  const modern = createMcpHandler(() => options.createServer(), { legacy: "reject", onerror: onError });

  const sweeper = setInterval(
    () => {
      const now = Date.now();
      for (const [id, session] of sessions) {
        if (session.active === 0 && now - session.lastUsed > idleMs) void endSession(id, session);
      }
    },
    Math.min(idleMs, 60_000),
  );
  sweeper.unref();

  async function endSession(id: string, session: Session): Promise<void> {
    sessions.delete(id);
    closeExtraStreams(session);
    try {
      await session.server.close();
    } catch (error) {
      onError(error as Error);
    }
  }

  /** Makes room for one more session; false when every session is busy. */
  function makeRoom(): boolean {
    if (sessions.size < maxSessions) return true;
    let oldest: [string, Session] | undefined;
    for (const entry of sessions) {
      if (entry[1].active === 0 && (!oldest || entry[1].lastUsed < oldest[1].lastUsed)) oldest = entry;
    }
    if (!oldest) return false;
    void endSession(oldest[0], oldest[1]);
    return true;
  }

  async function serve(
    session: Session,
    request: Request,
    authInfo: AuthInfo | undefined,
    parsedBody: unknown,
  ) {
    const post = request.method === "POST";
    session.active++;
    if (post) session.postsInFlight++;
    session.lastUsed = Date.now();
    let response: Response;
    try {
      response = await session.transport.handleRequest(request, {
        ...(authInfo ? { authInfo } : {}),
        ...(parsedBody !== undefined ? { parsedBody } : {}),
      });
    } catch (error) {
      session.active--;
      if (post) session.postsInFlight--;
      throw error;
    }
    // The GET stream starts with an SSE comment, so that its head and a first chunk leave at once, through
    // any proxy: without an event the SDK writes nothing until its 15 s keep-alive.
    const opening = request.method === "GET" && isEventStream(response) ? STREAM_OPENED : undefined;
    // A streamed answer (SSE) keeps the session busy until the stream ends.
    return trackBody(
      response,
      () => {
        session.active--;
        if (post) session.postsInFlight--;
        session.lastUsed = Date.now();
      },
      opening,
    );
  }

  /** A GET of a session: the SDK's stream, a stream beside it, or 405 for a resumption with nothing left. */
  async function getStream(session: Session, request: Request, authInfo: AuthInfo | undefined) {
    const lastEventId = request.headers.get("last-event-id");
    if (lastEventId && session.postsInFlight === 0 && session.events.nothingAfter(lastEventId)) {
      return jsonRpcErrorResponse(405, -32000, "Nothing to resume: that event's stream has ended", {
        allow: "GET, POST, DELETE",
      });
    }
    const response = await serve(session, request, authInfo, undefined);
    // The SDK keeps one GET stream per session and answers another with 409: serve it beside instead.
    if (response.status === 409 && !lastEventId) {
      await response.body?.cancel();
      return extraStream(session);
    }
    return response;
  }

  function extraStream(session: Session): Response {
    const streams = session.extraStreams;
    if (streams.size >= MAX_EXTRA_GET_STREAMS) streams.values().next().value?.();
    let close = () => {};
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(STREAM_OPENED.slice());
        const timer = setInterval(() => {
          try {
            controller.enqueue(KEEPALIVE.slice());
          } catch {
            close();
          }
        }, KEEPALIVE_MS);
        timer.unref();
        let closed = false;
        close = () => {
          if (closed) return;
          closed = true;
          clearInterval(timer);
          streams.delete(close);
          session.active--;
          session.lastUsed = Date.now();
          try {
            controller.close();
          } catch {
            // already errored or cancelled
          }
        };
        streams.add(close);
        session.active++;
      },
      cancel() {
        close();
      },
    });
    return new Response(body, {
      headers: {
        "content-type": "text/event-stream",
        "cache-control": "no-cache, no-transform",
        "x-accel-buffering": "no",
        ...(session.transport.sessionId ? { "mcp-session-id": session.transport.sessionId } : {}),
      },
    });
  }

  async function openSession(
    request: Request,
    authInfo: AuthInfo | undefined,
    parsedBody: unknown,
  ): Promise<Response> {
    if (!makeRoom()) {
      return jsonRpcErrorResponse(503, -32000, "Too many open sessions: try again later", {
        "retry-after": "5",
      });
    }
    const server = options.createServer();
    const events = createSessionEventStore();
    const session: Session = {
      server,
      events,
      lastUsed: Date.now(),
      active: 0,
      postsInFlight: 0,
      extraStreams: new Set(),
      transport: new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        // Each POST stream starts with an event id and a retry delay, so a client that loses it can
        // reconnect with Last-Event-ID and get what it missed (2025-11-25 transport, SEP-1699).
        eventStore: events,
        retryInterval: SSE_RETRY_MS,
        onsessioninitialized: (id) => {
          sessions.set(id, session);
        },
        onsessionclosed: (id) => {
          sessions.delete(id);
          closeExtraStreams(session);
        },
      }),
    };
    session.transport.onclose = () => {
      if (session.transport.sessionId) sessions.delete(session.transport.sessionId);
      closeExtraStreams(session);
    };
    await server.connect(session.transport);
    const response = await serve(session, request, authInfo, parsedBody);
    // A failed handshake leaves no session behind.
    if (!session.transport.sessionId || !sessions.has(session.transport.sessionId)) {
      await server.close().catch(onError);
    }
    return response;
  }

  async function legacy(
    request: Request,
    authInfo: AuthInfo | undefined,
    parsedBody: unknown,
  ): Promise<Response> {
    const sessionId = request.headers.get("mcp-session-id");
    if (sessionId) {
      const session = sessions.get(sessionId);
      if (!session) return jsonRpcErrorResponse(404, -32001, "Session not found");
      if (request.method === "GET") return getStream(session, request, authInfo);
      return serve(session, request, authInfo, parsedBody);
    }
    if (request.method === "GET" || request.method === "DELETE") {
      return jsonRpcErrorResponse(405, -32000, "Method not allowed.", { allow: "POST" });
    }
    if (request.method !== "POST") {
      return jsonRpcErrorResponse(405, -32000, "Method not allowed.", { allow: "GET, POST, DELETE" });
    }
    const body = await jsonBody(request, parsedBody);
    if (body === NOT_JSON) {
      return jsonRpcErrorResponse(400, -32700, "Parse error: the request body is not valid JSON");
    }
    if (opensSession(body)) return openSession(request, authInfo, parsedBody);
    return jsonRpcErrorResponse(
      400,
      -32000,
      "Bad Request: Mcp-Session-Id header is required (send initialize first, or use protocol 2026-07-28)",
    );
  }

  return {
    async fetch(request, fetchOptions) {
      if (closed) return jsonRpcErrorResponse(503, -32000, "The MCP server is shutting down");
      const authInfo = bearerAuthInfo(request);
      const parsedBody = fetchOptions?.parsedBody;
      if (await isLegacyRequest(request, parsedBody)) return legacy(request, authInfo, parsedBody);
      return modern.fetch(request, {
        ...(authInfo ? { authInfo } : {}),
        ...(parsedBody !== undefined ? { parsedBody } : {}),
      });
    },
    sessionCount: () => sessions.size,
    async close() {
      closed = true;
      clearInterval(sweeper);
      await Promise.all([...sessions].map(([id, session]) => endSession(id, session)));
      await modern.close();
    },
  };
}

const NOT_JSON = Symbol("not JSON");

/** The POST body as parsed by the caller, or parsed here from a copy (NOT_JSON when it is not JSON). */
async function jsonBody(request: Request, parsedBody: unknown): Promise<unknown> {
  if (parsedBody !== undefined) return parsedBody;
  try {
    return await request.clone().json();
  } catch {
    return NOT_JSON;
  }
}

/** Whether a sessionless 2025 POST is an `initialize` request (alone or in a batch). */
function opensSession(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.some((message) => isInitializeRequest(message));
}

const STREAM_OPENED = new TextEncoder().encode(": stream opened\n\n");
const KEEPALIVE = new TextEncoder().encode(": keepalive\n\n");

function closeExtraStreams(session: Session): void {
  for (const close of [...session.extraStreams]) close();
}

const isEventStream = (response: Response) =>
  (response.headers.get("content-type") ?? "").includes("text/event-stream");

/**
 * Calls `done` once the response body has been fully sent or abandoned (or at once without a body),
 * optionally sending `first` before the body.
 */
function trackBody(response: Response, done: () => void, first?: Uint8Array): Response {
  if (!response.body) {
    done();
    return response;
  }
  let finished = false;
  const finish = () => {
    if (!finished) {
      finished = true;
      done();
    }
  };
  const reader = response.body.getReader();
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      if (first) controller.enqueue(first.slice());
    },
    async pull(controller) {
      try {
        const { value, done: end } = await reader.read();
        if (end) {
          finish();
          controller.close();
        } else {
          controller.enqueue(value);
        }
      } catch (error) {
        finish();
        controller.error(error);
      }
    },
    async cancel(reason) {
      finish();
      await reader.cancel(reason);
    },
  });
  return new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}
