import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { segmentsByteLength, segmentsText, writeSegments } from "../../src/store/utf8-segments.ts";

const bytes = (text: string) => new TextEncoder().encode(text);
/** A target that is this buffer, whatever the length asked for. */
const into = (target: Uint8Array) => () => target;

describe("an answer written as UTF-8 segments", () => {
  const segments = ['[{"name":"é",', bytes('"objects":["✓","𝄞"]'), "}]"];
  const expected = '[{"name":"é","objects":["✓","𝄞"]}]';

  it("writes text and kept bytes in order, the same bytes as the text encoded", () => {
    const target = new Uint8Array(64).fill(0xff);
    const asked: number[] = [];
    const length = writeSegments(segments, (byteLength) => {
      asked.push(byteLength);
      return target;
    });
    assert.deepEqual(
      asked,
      [Buffer.byteLength(expected)],
      "asked once, for the exact length, before writing",
    );
    assert.equal(length, Buffer.byteLength(expected));
    assert.deepEqual(Buffer.from(target.subarray(0, length)), Buffer.from(expected));
    assert.equal(segmentsText(segments), expected);
  });

  it("says when they do not fit: by characters, by a text's bytes, by kept bytes", () => {
    const exact = Buffer.byteLength(expected);
    assert.equal(segmentsByteLength(segments), exact);
    assert.equal(writeSegments(segments, into(new Uint8Array(exact))), exact);
    assert.equal(writeSegments(segments, into(new Uint8Array(expected.length - 1))), undefined);
    // More bytes than characters: the characters fit, the bytes do not.
    assert.equal(writeSegments(segments, into(new Uint8Array(exact - 1))), undefined);
    assert.equal(writeSegments(["ab", bytes("✓✓")], into(new Uint8Array(7))), undefined);
    assert.equal(writeSegments(["é"], into(new Uint8Array(1))), undefined);
    assert.equal(writeSegments([], into(new Uint8Array(0))), 0);
  });

  it("writes nothing when no buffer is given, and writes at a view's own offset", () => {
    assert.equal(
      writeSegments(segments, () => undefined),
      undefined,
    );
    const whole = new Uint8Array(64).fill(0xff);
    const length = writeSegments(segments, () => whole.subarray(8));
    assert.equal(Buffer.from(whole.subarray(8, 8 + (length as number))).toString(), expected);
    assert.ok(
      whole.subarray(0, 8).every((b) => b === 0xff),
      "nothing written before the view",
    );
  });
});
