import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { BoundedCache } from "../../../src/auth/bounded-cache.ts";

describe("BoundedCache", () => {
  it("returns entries until their own expiry", () => {
    let now = 1_000;
    const cache = new BoundedCache<string>(10, () => now);
    cache.set("a", "A", 2_000);
    assert.equal(cache.get("a"), "A");
    now = 2_000;
    assert.equal(cache.get("a"), undefined);
  });

  it("never stores an already expired entry", () => {
    const cache = new BoundedCache<string>(10, () => 5_000);
    cache.set("a", "A", 4_000);
    assert.equal(cache.size, 0);
  });

  it("evicts the oldest entry when full", () => {
    const cache = new BoundedCache<number>(2, () => 0);
    cache.set("a", 1, 10);
    cache.set("b", 2, 10);
    cache.set("c", 3, 10);
    assert.equal(cache.size, 2);
    assert.equal(cache.get("a"), undefined);
    assert.equal(cache.get("c"), 3);
  });

  it("deletes on demand", () => {
    const cache = new BoundedCache<number>(2, () => 0);
    cache.set("a", 1, 10);
    cache.delete("a");
    assert.equal(cache.get("a"), undefined);
  });
});
