import type { EventId, EventStore, JSONRPCMessage, StreamId } from "@modelcontextprotocol/server";

/** What one 2025 session keeps for clients that reconnect with Last-Event-ID. */
export interface SessionEventLimits {
  /** Bytes of JSON kept, newest first; older events are dropped beyond it. */
  maxBytes: number;
  maxEvents: number;
}

const DEFAULT_LIMITS: SessionEventLimits = { maxBytes: 256 * 1024, maxEvents: 500 };

interface StoredEvent {
  id: EventId;
  streamId: StreamId;
  message: JSONRPCMessage;
  bytes: number;
}

/**
 * The SSE events of one 2025 session, in memory, bounded: with it the SDK's transport primes each
 * POST stream with an event id (2025-11-25 transport, SEP-1699) and replays what a client missed when it
 * reconnects with Last-Event-ID. It lives and dies with its session; what was dropped for the bounds
 * is answered like an unknown event id.
 */
/** The SDK's EventStore, plus what the handler asks before a resumption (see dual-era-handler.ts). */
export interface SessionEventStore extends EventStore {
  /**
   * Whether a client resuming after `eventId` can get nothing more: the event's stream has carried a
   * JSON-RPC response and holds no event after it. Unknown ids are not answered here (false).
   */
  nothingAfter(eventId: string): boolean;
}

const isResponse = (message: JSONRPCMessage) =>
  "id" in message && ("result" in message || "error" in message);

export function createSessionEventStore(limits: SessionEventLimits = DEFAULT_LIMITS): SessionEventStore {
  const events: StoredEvent[] = [];
  let bytes = 0;
  let next = 0;
  /** Streams that carried a response (bounded like the events: those left are a few). */
  const answered = new Set<StreamId>();

  return {
    nothingAfter(eventId) {
      const index = events.findIndex((event) => event.id === eventId);
      const streamId = events[index]?.streamId;
      if (streamId === undefined || !answered.has(streamId)) return false;
      return !events.slice(index + 1).some((event) => event.streamId === streamId);
    },
    async storeEvent(streamId, message) {
      if (isResponse(message)) {
        answered.add(streamId);
        if (answered.size > limits.maxEvents) answered.delete(answered.values().next().value as StreamId);
      }
      const size = JSON.stringify(message).length;
      const event = { id: String(++next), streamId, message, bytes: size };
      events.push(event);
      bytes += size;
      while (events.length > 1 && (bytes > limits.maxBytes || events.length > limits.maxEvents)) {
        bytes -= (events.shift() as StoredEvent).bytes;
      }
      return event.id;
    },
    async getStreamIdForEventId(eventId) {
      return events.find((event) => event.id === eventId)?.streamId;
    },
    async replayEventsAfter(lastEventId, { send }) {
      const index = events.findIndex((event) => event.id === lastEventId);
      const streamId = events[index]?.streamId;
      if (streamId === undefined) throw new Error(`unknown event id ${lastEventId}`);
      for (const event of events.slice(index + 1)) {
        // Priming events carry no message: nothing to replay.
        if (event.streamId === streamId && "jsonrpc" in event.message) await send(event.id, event.message);
      }
      return streamId;
    },
  };
}
