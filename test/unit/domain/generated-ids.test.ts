import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { alphanumericId } from "../../../src/domain/generated-ids.ts";

describe("generated ids", () => {
  it("never start with '-' (nor hold '-' or '_'): 20,000 ids, of 22 letters and digits each", () => {
    // oidc-provider's default (nanoid, 64 symbols with '-' and '_') starts with '-' once in 64: about
    // 312 of these 20,000 would have, and the CLI reads such an id as an option.
    const ids = Array.from({ length: 20_000 }, () => alphanumericId());
    for (const id of ids) assert.match(id, /^[A-Za-z0-9]{22}$/);
    assert.equal(new Set(ids).size, ids.length, "no two alike");
    assert.equal(new Set(ids.map((id) => id[0])).size, 62, "every letter and digit starts some id");
  });

  it("uses every letter and digit, none much more often than the others (no modulo bias)", () => {
    const counts = new Map<string, number>();
    for (let i = 0; i < 5_000; i++) {
      for (const c of alphanumericId(62)) counts.set(c, (counts.get(c) ?? 0) + 1);
    }
    assert.equal(counts.size, 62);
    // 310,000 characters: 5,000 of each expected; a byte taken modulo 62 without redraw would give
    // the first 8 symbols 5/4 as many (about 6,050), far outside these bounds (15 sigma).
    for (const [c, n] of counts) assert.ok(n > 4_600 && n < 5_400, `${c}: ${n}`);
  });

  it("has the length asked for", () => {
    assert.equal(alphanumericId(1).length, 1);
    assert.equal(alphanumericId(40).length, 40);
  });
});
