import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { unverifiedName } from "../../../src/idp/keycloak/registered-clients.ts";

describe("the name Keycloak's consent page shows for a registered client", () => {
  it("marks the claimed name unverified and names every redirect host once", () => {
    assert.equal(
      unverifiedName("MCP CLI Proxy", [
        "http://localhost:3334/cb",
        "http://127.0.0.1:9/cb",
        "http://localhost:5/x",
      ]),
      "Unverified client “MCP CLI Proxy” (redirects to localhost, 127.0.0.1)",
    );
  });
  it("says so when the client gave no name", () => {
    assert.equal(
      unverifiedName("  ", ["https://app.example.com/cb"]),
      "Unverified client (no name) (redirects to app.example.com)",
    );
    assert.equal(
      unverifiedName(undefined, ["http://[::1]:8/cb"]),
      "Unverified client (no name) (redirects to [::1])",
    );
  });
  it("fits Keycloak's 255 characters whatever the client claims", () => {
    const name = unverifiedName(
      "x".repeat(1000),
      Array.from({ length: 10 }, (_, i) => `https://h${i}-${"a".repeat(60)}.example.com/cb`),
    );
    assert.ok(name.length <= 255, String(name.length));
    assert.match(name, /^Unverified client “x+…” \(redirects to h0-a+\.example\.com, /);
  });
});
