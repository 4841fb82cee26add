import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { forwardableRequestHeaders, forwardableResponseHeaders } from "../../../src/gateway/hop-by-hop.ts";

describe("hop-by-hop headers (RFC 9110 §7.6.1)", () => {
  it("the upstream sees none of the client's connection headers, nor those the Connection header names", () => {
    assert.deepEqual(
      forwardableRequestHeaders({
        host: "gateway",
        connection: "X-Foo, close",
        "x-foo": "1",
        "keep-alive": "timeout=5",
        "proxy-connection": "keep-alive",
        te: "trailers",
        "transfer-encoding": "chunked",
        upgrade: "websocket",
        expect: "100-continue",
        "proxy-authorization": "Basic eA==",
        "content-type": "application/json",
        "x-api-key": "imk_x",
      }),
      { host: "gateway", "content-type": "application/json", "x-api-key": "imk_x" },
    );
  });
  it("the client sees none of the upstream's connection headers", () => {
    assert.deepEqual(
      forwardableResponseHeaders({
        connection: "keep-alive, x-upstream-hint",
        "keep-alive": "timeout=72",
        "x-upstream-hint": "1",
        "transfer-encoding": "chunked",
        "proxy-authenticate": "Basic",
        "content-type": "application/json",
        "mcp-session-id": "abc",
      }),
      { "content-type": "application/json", "mcp-session-id": "abc" },
    );
  });
});
