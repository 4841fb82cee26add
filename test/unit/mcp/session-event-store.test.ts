import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { JSONRPCMessage } from "@modelcontextprotocol/server";
import { createSessionEventStore } from "../../../src/mcp/session-event-store.ts";

const result = (id: number, text = "x"): JSONRPCMessage => ({ jsonrpc: "2.0", id, result: { text } });

describe("a 2025 session's SSE events", () => {
  it("replays the events of the same stream after the given id, priming events left out", async () => {
    const store = createSessionEventStore();
    const priming = await store.storeEvent("post-1", {} as JSONRPCMessage);
    await store.storeEvent("post-2", result(2));
    const first = await store.storeEvent("post-1", result(1));
    const sent: [string, JSONRPCMessage][] = [];
    const stream = await store.replayEventsAfter(priming, {
      send: async (id, message) => {
        sent.push([id, message]);
      },
    });
    assert.equal(stream, "post-1");
    assert.deepEqual(sent, [[first, result(1)]]);
    assert.equal(await store.getStreamIdForEventId?.(priming), "post-1");
  });

  it("keeps the newest events within its bounds: an id dropped for them is unknown", async () => {
    const store = createSessionEventStore({ maxBytes: 1_000, maxEvents: 100 });
    const oldest = await store.storeEvent("s", result(1, "a".repeat(400)));
    await store.storeEvent("s", result(2, "b".repeat(400)));
    const newest = await store.storeEvent("s", result(3, "c".repeat(400)));
    assert.equal(await store.getStreamIdForEventId?.(oldest), undefined);
    assert.equal(await store.getStreamIdForEventId?.(newest), "s");
    await assert.rejects(store.replayEventsAfter(oldest, { send: async () => {} }), /unknown event id/);

    const counted = createSessionEventStore({ maxBytes: 1_000_000, maxEvents: 3 });
    const ids = [];
    for (let i = 0; i < 5; i++) ids.push(await counted.storeEvent("s", result(i)));
    assert.deepEqual(await Promise.all(ids.map((id) => counted.getStreamIdForEventId?.(id))), [
      undefined,
      undefined,
      "s",
      "s",
      "s",
    ]);
  });
});
