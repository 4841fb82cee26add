import compress from "@fastify/compress";
import type { FastifyInstance } from "fastify";

/** Answers smaller than this go out as they are: compressing them saves less than it costs. */
const COMPRESSION_THRESHOLD_BYTES = 1024;
/** Up to this size an answer is compressed at once on the event loop; larger ones in libuv's thread pool. */
const SYNC_COMPRESSION_MAX_BYTES = 16 * 1024;

/**
 * JSON answers honour Accept-Encoding (br, gzip) above a threshold, with Vary: Accept-Encoding. The
 * gateway forwards both headers as they are, so compression reaches clients through it too.
 * Brotli at quality 4 (the plugin's default): most of the ratio of the higher levels at a fraction
 * of the CPU (docs/benchmarks.md).
 */
export async function compressAnswers(app: FastifyInstance): Promise<void> {
  await app.register(compress, {
    encodings: ["br", "gzip"],
    threshold: COMPRESSION_THRESHOLD_BYTES,
    syncThreshold: SYNC_COMPRESSION_MAX_BYTES,
  });
}
