import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { safeReturnPath } from "../../../src/gateway/console/index.ts";

describe("the console's return path after sign-in stays on the console", () => {
  it("keeps console paths with their query", () => {
    assert.equal(safeReturnPath("/"), "/");
    assert.equal(safeReturnPath("/console/connect?x=1"), "/console/connect?x=1");
    assert.equal(safeReturnPath("/console/applications/shop"), "/console/applications/shop");
  });
  it("refuses other hosts, schemes and paths outside the console", () => {
    for (const bad of [
      "//evil.example/x",
      "https://evil.example/",
      "/\\evil.example",
      "javascript:alert(1)",
      "/rest/applications",
      "",
      undefined,
      42,
    ]) {
      assert.equal(safeReturnPath(bad), "/", String(bad));
    }
  });
});
