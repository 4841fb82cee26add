import { Readable } from "node:stream";
import { setImmediate as nextTurn } from "node:timers/promises";
import type { FastifyInstance, FastifyReply } from "fastify";

/** Above this much JSON, a page goes out in pieces of about this size, the event loop free between them. */
const STREAM_CHUNK_CHARS = 64 * 1024;

type Serialize = (item: unknown) => string;

/**
 * Streaming serialization of large pages. A list operation's page is serialized by its response
 * schema's item serializer one piece at a time: a small page is sent whole as before, a large one (a
 * search over thousands of objects) as a stream whose pieces are made one
 * event-loop turn apart, so no request waits behind one big JSON.stringify. Applies to every route
 * whose 200 answer is an array of a schema; register before the routes. (The occurrences page is not
 * serialized here: the store assembles its JSON, see listOccurrencesJson.)
 */
export function streamLargePages(app: FastifyInstance): void {
  app.addHook("onRoute", (route) => {
    const ok = (route.schema?.response as Record<string, unknown> | undefined)?.["200"] as
      | { type?: unknown; items?: unknown }
      | undefined;
    if (ok?.type !== "array" || typeof ok.items !== "object" || ok.items === null) return;
    const items = ok.items as Record<string, unknown>;
    const handler = route.handler;
    route.handler = async function (this: FastifyInstance, request, reply) {
      const result = await handler.call(this, request, reply);
      if (!Array.isArray(result) || reply.sent) return result;
      // Fastify caches the compiled serializer per route and schema.
      return sendPage(reply, result, reply.compileSerializationSchema(items) as Serialize);
    };
  });
}

function sendPage(reply: FastifyReply, items: readonly unknown[], serialize: Serialize): FastifyReply {
  let next = 0;
  const piece = (): string => {
    let text = next === 0 ? "[" : "";
    const start = text.length;
    while (next < items.length && text.length - start < STREAM_CHUNK_CHARS) {
      if (next > 0) text += ",";
      text += serialize(items[next]);
      next++;
    }
    if (next === items.length) text += "]";
    return text;
  };
  reply.type("application/json; charset=utf-8");
  const first = piece();
  if (next === items.length) return reply.send(first);
  async function* rest(): AsyncGenerator<string> {
    yield first;
    while (next < items.length) {
      await nextTurn();
      yield piece();
    }
  }
  return reply.send(Readable.from(rest(), { objectMode: false }));
}
