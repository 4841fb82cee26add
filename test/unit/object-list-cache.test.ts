import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ObjectListCache } from "../../src/store/object-list-cache.ts";

describe("the PostgreSQL occurrence lists kept by the process", () => {
  it("stays within its size, dropping the least recently used lists first", () => {
    const cache = new ObjectListCache(10);
    cache.set("a", "[1,2]"); // 5 characters
    cache.set("b", "[3,4]"); // 10
    assert.equal(cache.get("a"), "[1,2]"); // a is now the most recently used
    cache.set("c", "[5]"); // 13 > 10: b goes, a stays
    assert.equal(cache.get("b"), undefined);
    assert.equal(cache.get("a"), "[1,2]");
    assert.equal(cache.get("c"), "[5]");
  });

  it("does not keep a list larger than the whole cache, and counts a replaced list once", () => {
    const cache = new ObjectListCache(10);
    cache.set("a", "[1,2]");
    cache.set("huge", "[11111111111]");
    assert.equal(cache.get("huge"), undefined);
    assert.equal(cache.get("a"), "[1,2]");
    cache.set("a", "[1,2]");
    cache.set("a", "[1,2]");
    cache.set("b", "[3,4]"); // 10 characters in all: both fit
    assert.equal(cache.get("a"), "[1,2]");
    assert.equal(cache.get("b"), "[3,4]");
  });

  it("counts a SQLite list kept as bytes by its bytes", () => {
    const cache = new ObjectListCache(10);
    const list = new TextEncoder().encode('["é✓"]'); // 4 characters, 9 bytes
    cache.set("a", list);
    assert.equal(cache.get("a"), list);
    cache.set("b", "[1]"); // 12 > 10: a goes
    assert.equal(cache.get("a"), undefined);
    assert.equal(cache.get("b"), "[1]");
  });
});
