import type { IncomingHttpHeaders, OutgoingHttpHeaders, ServerResponse } from "node:http";
import type { Dispatcher } from "undici";

export interface Forward {
  method: string;
  /** Origin-form target: path and query. */
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body?: Buffer | undefined;
}

export interface ForwardHooks {
  /**
   * The upstream's status and headers arrived: returns the headers to write to the client (or
   * `undefined` when the caller answered the client itself). Called once, for the final status.
   */
  onHeaders(statusCode: number, headers: IncomingHttpHeaders): OutgoingHttpHeaders | undefined;
  /** The upstream could not be reached or failed before its headers: nothing was written yet. */
  onError(error: Error): void;
}

/**
 * Streams one request to an upstream and its answer straight into the client's response, chunk by
 * chunk with back-pressure, through undici's dispatcher API: no intermediate stream, no copy of the
 * body. A client that goes away aborts the upstream request (and with it an SSE stream); an upstream
 * that fails mid-answer cuts the client's response (its length or chunked framing then tells the
 * client the answer is incomplete).
 */
export function forwardStreaming(
  dispatcher: Dispatcher,
  forward: Forward,
  res: ServerResponse,
  hooks: ForwardHooks,
): ForwardedRequest {
  let controller: Dispatcher.DispatchController | undefined;
  let writing = false;
  let ending = false;
  /**
   * The first chunk of an answer that is no event stream, held until the next chunk or the end: an
   * answer in one chunk (most JSON-RPC answers) then leaves in one write (headers, chunk, terminator)
   * instead of two or three. Each write is a system call, the costliest part of a hop.
   */
  let held: Buffer | undefined;
  let holding = false;
  const onClientClose = () => {
    if (!res.writableFinished) controller?.abort(new Error("the client closed the connection"));
  };
  const onDrain = () => controller?.resume();
  res.once("close", onClientClose);

  const handler: Dispatcher.DispatchHandler = {
    onRequestStart(started) {
      controller = started;
      if (res.destroyed) started.abort(new Error("the client closed the connection"));
    },
    onResponseStart(_controller, statusCode, headers) {
      if (statusCode < 200) return;
      const outgoing = hooks.onHeaders(statusCode, headers);
      if (outgoing === undefined) {
        controller?.abort(new Error("answered by the gateway"));
        return;
      }
      writing = true;
      res.writeHead(statusCode, outgoing);
      res.on("drain", onDrain);
      const type = headers["content-type"];
      // SSE: the client must see the headers before the first event, which may come much later.
      if (typeof type === "string" && type.startsWith("text/event-stream")) res.flushHeaders();
      else holding = true;
    },
    onResponseData(active, chunk) {
      if (!writing) return;
      if (holding) {
        holding = false;
        held = chunk;
        return;
      }
      if (held) {
        res.write(held);
        held = undefined;
      }
      if (!res.write(chunk)) active.pause();
    },
    onResponseEnd() {
      res.removeListener("close", onClientClose);
      res.removeListener("drain", onDrain);
      if (!writing) return;
      // end() corks the socket: headers, the held chunk and the chunked terminator go in one write.
      res.end(held);
      held = undefined;
    },
    onResponseError(_controller, error) {
      res.removeListener("close", onClientClose);
      res.removeListener("drain", onDrain);
      // Ended on purpose (shutdown): the client sees a clean end of the stream, not a cut.
      if (writing) ending ? res.end() : res.destroy(error);
      else if (!res.destroyed) hooks.onError(error);
    },
  };
  dispatcher.dispatch(
    {
      method: forward.method as Dispatcher.HttpMethod,
      path: forward.path,
      headers: forward.headers,
      body: forward.body ?? null,
    },
    handler,
  );
  return {
    end() {
      if (ending || res.writableEnded) return;
      ending = true;
      if (controller) controller.abort(new Error("the gateway is shutting down"));
      else if (writing) res.end();
    },
  };
}

export interface ForwardedRequest {
  /**
   * Ends the exchange now (shutdown of an open event stream): the upstream request is aborted and the
   * client's response ended cleanly if it has begun; before the upstream's headers, `onError` answers.
   */
  end(): void;
}
