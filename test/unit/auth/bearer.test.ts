import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { bearerToken } from "../../../src/auth/bearer.ts";

describe("bearerToken: the Authorization header's Bearer token (RFC 6750 §2.1)", () => {
  it("reads a b64token after the scheme, in any case, spaces or tabs around", () => {
    assert.equal(bearerToken("Bearer eyJhbGciOi.eyJzdWIi.c2ln"), "eyJhbGciOi.eyJzdWIi.c2ln");
    assert.equal(bearerToken("bearer abc"), "abc");
    assert.equal(bearerToken("BEARER\tabc-._~+/=="), "abc-._~+/==");
    assert.equal(bearerToken("Bearer   abc \t"), "abc");
  });

  it("refuses what is not one: no header, another scheme, no token, two tokens, other characters", () => {
    for (const header of [
      undefined,
      null,
      "",
      "Bearer",
      "Bearer ",
      "Basic YWxpY2U6cHc=",
      "Bearer a b",
      "Bearer a,b",
      "Bearer =abc",
      "Bearer a=b",
      "Bearer\u00a0abc",
      "Bearer abc\n",
      "Bearerabc",
    ]) {
      assert.equal(bearerToken(header), undefined, JSON.stringify(header));
    }
  });
});
