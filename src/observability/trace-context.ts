import { randomFillSync } from "node:crypto";
import type { IncomingMessage } from "node:http";

/**
 * W3C Trace Context (`traceparent`), enough to correlate logs: every request gets an id, the
 * trace-id of the client's `traceparent` when it sends a valid one, else a new one. The id is the
 * request's `reqId` in the log lines of every listener, and goes to the upstreams in a `traceparent`
 * naming this hop as the parent, so the gateway's, the MCP servers' and the REST API's lines of one
 * request share it. No spans are recorded: the sampled flag is passed on as received (`00` for a
 * request that started here).
 */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

interface TraceParent {
  traceId: string;
  parentId: string;
  flags: string;
}

/** A valid `traceparent` (version ff, all-zero ids and, for version 00, trailing data are invalid). */
export function parseTraceparent(value: unknown): TraceParent | undefined {
  if (typeof value !== "string") return undefined;
  const match = TRACEPARENT.exec(value.trim());
  if (!match) return undefined;
  const [, version, traceId, parentId, flags, rest] = match as unknown as [
    string,
    string,
    string,
    string,
    string,
    string?,
  ];
  if (version === "ff" || (version === "00" && rest !== undefined)) return undefined;
  if (/^0+$/.test(traceId) || /^0+$/.test(parentId)) return undefined;
  return { traceId, parentId, flags };
}

/**
 * Random ids from a pool filled 4 KiB at a time: two ids per proxied request, and a call into the
 * crypto binding for each 8 or 16 bytes costs more than the hex encoding of a slice (issue 18).
 */
const POOL = Buffer.alloc(4096);
let poolOffset = POOL.length;
function randomHex(bytes: number): string {
  if (poolOffset + bytes > POOL.length) {
    randomFillSync(POOL);
    poolOffset = 0;
  }
  const hex = POOL.toString("hex", poolOffset, poolOffset + bytes);
  poolOffset += bytes;
  return hex;
}

/** Fastify's `genReqId`: the client's trace-id, or a new one. */
export function requestIdOf(request: IncomingMessage): string {
  return parseTraceparent(request.headers.traceparent)?.traceId ?? randomHex(16);
}

/** The `traceparent` sent upstream for a request whose id is `requestId`: this hop as the parent. */
export function upstreamTraceparent(requestId: string, incoming: unknown): string {
  const flags = parseTraceparent(incoming)?.flags ?? "00";
  const traceId = /^[0-9a-f]{32}$/.test(requestId) ? requestId : randomHex(16);
  return `00-${traceId}-${randomHex(8)}-${flags}`;
}
