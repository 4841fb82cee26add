/**
 * An answer as a list of segments: text, and stored UTF-8 bytes kept as they are (SQLite's inflated
 * object lists, object-list-cache.ts). A reader thread writes them straight into a given buffer (a read
 * pool's slot, sqlite-read-pool.ts): the text encoded in place, the bytes copied, so a page is never made
 * a string and leaves almost no garbage (docs/benchmarks-history.md, "the page as bytes end
 * to end").
 */
export type Segment = string | Uint8Array;

/**
 * Where an answer's bytes go, asked once their exact length is known (before any byte is written): a
 * buffer of at least that length (a pool's slot may grow to it), or undefined when none can hold them.
 */
export type ByteTarget = (byteLength: number) => Uint8Array | undefined;

const decoder = new TextDecoder();

/** The segments' UTF-8 length: the bytes' own, the texts' encoded (without encoding them). */
export function segmentsByteLength(segments: readonly Segment[]): number {
  let byteLength = 0;
  for (const segment of segments) {
    byteLength += typeof segment === "string" ? Buffer.byteLength(segment) : segment.length;
  }
  return byteLength;
}

/**
 * The segments' UTF-8 bytes written at the start of the buffer `targetFor` gives for their length: that
 * length, or undefined (nothing written) when it gives none.
 */
export function writeSegments(segments: readonly Segment[], targetFor: ByteTarget): number | undefined {
  const byteLength = segmentsByteLength(segments);
  const target = targetFor(byteLength);
  if (!target || target.length < byteLength) return undefined;
  // A Buffer over the same memory writes a text at an offset without a view per segment.
  const out = Buffer.from(target.buffer, target.byteOffset, byteLength);
  let at = 0;
  for (const segment of segments) {
    if (typeof segment === "string") at += out.write(segment, at);
    else {
      out.set(segment, at);
      at += segment.length;
    }
  }
  return at;
}

/** The segments as one text (the bytes decoded as UTF-8). */
export function segmentsText(segments: readonly Segment[]): string {
  return segments
    .map((segment) => (typeof segment === "string" ? segment : decoder.decode(segment)))
    .join("");
}
