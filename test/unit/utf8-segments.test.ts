import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { segmentsText, writeSegments } from "../../src/store/utf8-segments.ts";

const bytes = (text: string) => new TextEncoder().encode(text);

describe("an answer written as UTF-8 segments", () => {
  const segments = ['[{"name":"é",', bytes('"objects":["✓","𝄞"]'), "}]"];
  const expected = '[{"name":"é","objects":["✓","𝄞"]}]';

  it("writes text and kept bytes in order, the same bytes as the text encoded", () => {
    const target = new Uint8Array(64).fill(0xff);
    const length = writeSegments(segments, target);
    assert.equal(length, Buffer.byteLength(expected));
    assert.deepEqual(Buffer.from(target.subarray(0, length)), Buffer.from(expected));
    assert.equal(segmentsText(segments), expected);
  });

  it("says when they do not fit: by characters, by a text's bytes, by kept bytes", () => {
    const exact = Buffer.byteLength(expected);
    assert.equal(writeSegments(segments, new Uint8Array(exact)), exact);
    assert.equal(writeSegments(segments, new Uint8Array(expected.length - 1)), undefined);
    // More bytes than characters: the characters fit, the bytes do not.
    assert.equal(writeSegments(segments, new Uint8Array(exact - 1)), undefined);
    assert.equal(writeSegments(["ab", bytes("✓✓")], new Uint8Array(7)), undefined);
    assert.equal(writeSegments(["é"], new Uint8Array(1)), undefined);
    assert.equal(writeSegments([], new Uint8Array(0)), 0);
  });
});
