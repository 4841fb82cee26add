import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseCveReference, parseDateTime, parseLimit, parseSkip } from "../../../src/rest/params.ts";

describe("query parameter rules", () => {
  it("limit is required and bounded 1..1000", () => {
    assert.deepEqual(parseLimit("50", { required: true }), { ok: true, value: 50 });
    assert.deepEqual(parseLimit("1000", { required: true }), { ok: true, value: 1000 });
    for (const bad of [undefined, "", "0", "1001", "-5", "5.0", "1e3", " 5"]) {
      assert.equal(parseLimit(bad, { required: true }).ok, false, `limit ${bad}`);
    }
    assert.deepEqual(parseLimit(undefined, { required: false, fallback: 100 }), { ok: true, value: 100 });
    // Absent takes the default, an empty value is refused, as the OpenAPI document's integer says.
    assert.equal(parseLimit("", { required: false, fallback: 100 }).ok, false);
    assert.equal(parseSkip("").ok, false);
    assert.equal(parseSkip(String(Number.MAX_SAFE_INTEGER + 2)).ok, false);
  });

  it("skip defaults to 0 and must be a non-negative integer", () => {
    assert.deepEqual(parseSkip(undefined), { ok: true, value: 0 });
    assert.deepEqual(parseSkip("1500"), { ok: true, value: 1500 });
    for (const bad of ["-1", "1.5", "x", "99999999999999999999"])
      assert.equal(parseSkip(bad).ok, false, `skip ${bad}`);
  });

  it("dates are ISO 8601 date-times, normalised to UTC", () => {
    assert.deepEqual(parseDateTime("2024-06-01T09:00:00Z"), { ok: true, value: "2024-06-01T09:00:00.000Z" });
    assert.deepEqual(parseDateTime("2024-06-01T11:00:00+02:00"), {
      ok: true,
      value: "2024-06-01T09:00:00.000Z",
    });
    assert.deepEqual(parseDateTime("2024-06-01T09:00:00.123456Z"), {
      ok: true,
      value: "2024-06-01T09:00:00.123Z",
    });
    assert.deepEqual(parseDateTime("2024-06-01T09:00"), { ok: true, value: "2024-06-01T09:00:00.000Z" });
    assert.deepEqual(parseDateTime(undefined), { ok: true, value: undefined });
    assert.equal(parseDateTime("").ok, false, "an empty date is no date (the OpenAPI document says so)");
    // Date.UTC maps years 0-99 to 1900-1999: these are years of the first century.
    assert.deepEqual(parseDateTime("0001-01-01T00:00:00Z"), { ok: true, value: "0001-01-01T00:00:00.000Z" });
    assert.deepEqual(parseDateTime("0099-12-31T23:59:59Z"), { ok: true, value: "0099-12-31T23:59:59.000Z" });
    assert.deepEqual(parseDateTime("0050-02-29T00:00:00Z").ok, false, "50 is no leap year");
    assert.deepEqual(parseDateTime("0048-02-29T00:00:00Z"), { ok: true, value: "0048-02-29T00:00:00.000Z" });
    for (const bad of [
      "2024-06-01",
      "2024-13-01T00:00:00Z",
      "2023-02-29T00:00:00Z",
      "2024-06-01T24:00:00Z",
      "now",
      "2024-06-01T09:00:00+25:00",
    ]) {
      assert.equal(parseDateTime(bad).ok, false, `date ${bad}`);
    }
  });

  it("CVE references and GHSA aliases", () => {
    assert.deepEqual(parseCveReference("cve-2021-44228"), { ok: true, value: "CVE-2021-44228" });
    assert.deepEqual(parseCveReference("CVE-2021-123456"), { ok: true, value: "CVE-2021-123456" });
    assert.deepEqual(parseCveReference("GHSA-JFH8-C2JP-5V3Q"), { ok: true, value: "GHSA-jfh8-c2jp-5v3q" });
    for (const bad of ["CVE-2021-123", "2021-44228", "GHSA-abcd-efgh-ijkl", ""])
      assert.equal(parseCveReference(bad).ok, false, bad);
  });
});
