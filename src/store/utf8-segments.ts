/**
 * An answer as a list of segments: text, and stored UTF-8 bytes kept as they are (SQLite's inflated
 * object lists, object-list-cache.ts). A reader thread writes them straight into a given buffer (a read
 * pool's slot, sqlite-read-pool.ts): the text encoded in place, the bytes copied, so a page is never made
 * a string and leaves almost no garbage (docs/benchmarks.md, "the page as bytes end to end").
 */
export type Segment = string | Uint8Array;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The segments' UTF-8 bytes written at the start of `target`: their length, or undefined if they do not fit. */
export function writeSegments(segments: readonly Segment[], target: Uint8Array): number | undefined {
  // A text's UTF-8 is at least one byte per character: a page that cannot fit (a wide limit-500 page is
  // ~7 MB) is known before any byte is written.
  let atLeast = 0;
  for (const segment of segments) atLeast += segment.length;
  if (atLeast > target.length) return undefined;
  let at = 0;
  for (const segment of segments) {
    if (typeof segment === "string") {
      const { read, written } = encoder.encodeInto(segment, target.subarray(at));
      if (read !== segment.length) return undefined;
      at += written;
    } else {
      if (target.length - at < segment.length) return undefined;
      target.set(segment, at);
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
