import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { toUtcSeconds } from "../../../src/store/insights.ts";

describe("toUtcSeconds", () => {
  it("answers what parsing the date answers, for the store's own form and for others", () => {
    const parsed = (iso: string) => new Date(iso).toISOString().replace(/\.\d{3}Z$/, "Z");
    const inputs = [
      "2024-01-01T00:00:00.000Z",
      "2024-03-01T10:20:30.999Z",
      "1999-12-31T23:59:59.500Z",
      "2024-03-01T10:20:30Z",
      "2024-03-01T10:20:30+02:00",
      "2024-03-01T10:20:30.123+00:00",
      "2024-03-01 10:20:30",
      "+012024-03-01T10:20:30.000Z",
    ];
    for (let i = 0; i < 2000; i++)
      inputs.push(new Date(Date.UTC(1970, 0, 1) + i * 7_919_999_937).toISOString());
    for (const iso of inputs) assert.equal(toUtcSeconds(iso), parsed(iso), iso);
  });

  it("cuts the milliseconds of the store's form to the second, with a trailing Z", () => {
    assert.equal(toUtcSeconds("2024-03-01T10:20:30.999Z"), "2024-03-01T10:20:30Z");
  });

  it("still refuses what is not a date", () => {
    assert.throws(() => toUtcSeconds("not a date"), RangeError);
  });
});
