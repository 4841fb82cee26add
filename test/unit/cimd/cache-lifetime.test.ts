import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { cacheLifetimeSeconds } from "../../../src/idp/cimd/cache-lifetime.ts";

const NOW = Date.parse("2026-01-01T00:00:00Z");

describe("cacheLifetimeSeconds: Cache-Control max-age or Expires, clamped to [300 s, 1 day]", () => {
  it("uses max-age within the bounds", () => {
    assert.equal(cacheLifetimeSeconds({ "cache-control": "public, max-age=3600" }, NOW), 3600);
  });
  it("raises a short max-age to 300 s", () => {
    assert.equal(cacheLifetimeSeconds({ "cache-control": "max-age=10" }, NOW), 300);
    assert.equal(cacheLifetimeSeconds({ "cache-control": "max-age=0" }, NOW), 300);
  });
  it("lowers a long max-age to one day", () => {
    assert.equal(cacheLifetimeSeconds({ "cache-control": "max-age=31536000" }, NOW), 86_400);
  });
  it("subtracts Age", () => {
    assert.equal(cacheLifetimeSeconds({ "cache-control": "max-age=3600", age: "600" }, NOW), 3000);
  });
  it("gives no-store and no-cache the minimum", () => {
    assert.equal(cacheLifetimeSeconds({ "cache-control": "no-store" }, NOW), 300);
    assert.equal(cacheLifetimeSeconds({ "cache-control": "no-cache, max-age=9000" }, NOW), 300);
  });
  it("falls back to Expires, against Date when present", () => {
    const inTwoHours = new Date(NOW + 7200_000).toUTCString();
    assert.equal(cacheLifetimeSeconds({ expires: inTwoHours }, NOW), 7200);
    assert.equal(
      cacheLifetimeSeconds({ expires: inTwoHours, date: new Date(NOW + 3600_000).toUTCString() }, NOW),
      3600,
    );
    assert.equal(
      cacheLifetimeSeconds({ expires: new Date(NOW + 30 * 86_400_000).toUTCString() }, NOW),
      86_400,
    );
    assert.equal(cacheLifetimeSeconds({ expires: "0" }, NOW), 300);
  });
  it("prefers max-age over Expires", () => {
    const inTwoHours = new Date(NOW + 7200_000).toUTCString();
    assert.equal(cacheLifetimeSeconds({ "cache-control": "max-age=600", expires: inTwoHours }, NOW), 600);
  });
  it("gives the minimum without caching headers, and honours other bounds", () => {
    assert.equal(cacheLifetimeSeconds({}, NOW), 300);
    assert.equal(cacheLifetimeSeconds({ "cache-control": "max-age=5" }, NOW, { min: 1, max: 10 }), 5);
  });
});
