/**
 * Request and span ids come from a pooled random buffer (issue 18): every id is fresh and well-formed,
 * also across the pool's refills (4 KiB = about 170 requests of one 16-byte and one 8-byte id).
 */
import assert from "node:assert/strict";
import type { IncomingMessage } from "node:http";
import { describe, it } from "node:test";
import { parseTraceparent, requestIdOf, upstreamTraceparent } from "../../src/observability/trace-context.ts";

describe("trace ids from the random pool", () => {
  it("gives every request a new trace-id and every hop a new parent id, valid W3C ids", () => {
    const traceIds = new Set<string>();
    const parentIds = new Set<string>();
    for (let i = 0; i < 2_000; i++) {
      const id = requestIdOf({ headers: {} } as IncomingMessage);
      assert.match(id, /^[0-9a-f]{32}$/);
      const parent = parseTraceparent(upstreamTraceparent(id, undefined));
      assert.ok(parent, "the traceparent sent upstream is valid");
      assert.equal(parent.traceId, id);
      assert.equal(parent.flags, "00");
      traceIds.add(id);
      parentIds.add(parent.parentId);
    }
    assert.equal(traceIds.size, 2_000, "a trace-id came twice");
    assert.equal(parentIds.size, 2_000, "a parent id came twice");
  });

  it("keeps a valid incoming trace-id and its flags", () => {
    const incoming = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    const id = requestIdOf({ headers: { traceparent: incoming } } as unknown as IncomingMessage);
    assert.equal(id, "4bf92f3577b34da6a3ce929d0e0e4736");
    const sent = parseTraceparent(upstreamTraceparent(id, incoming));
    assert.equal(sent?.traceId, id);
    assert.equal(sent?.flags, "01");
    assert.notEqual(sent?.parentId, "00f067aa0ba902b7");
  });
});
