import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { table } from "../../../src/mcp/tool-text.ts";

describe("the tools' Markdown tables", () => {
  it("escapes pipes and folds line breaks in a cell, shows '-' for an empty one, leaves the rest as it is", () => {
    assert.equal(
      table(
        ["name", "note", "count"],
        [
          ["a|b", "first line\r\n   second\nthird", 3],
          ["plain text, no change", null, 0],
          ["", undefined, "tab\there"],
        ],
      ),
      [
        "| name | note | count |",
        "|---|---|---|",
        "| a\\|b | first line second third | 3 |",
        "| plain text, no change | - | 0 |",
        "| - | - | tab\there |",
      ].join("\n"),
    );
  });
});
