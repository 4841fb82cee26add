import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MCP_SCOPES } from "../../../src/auth/mcp-access.ts";
import { createRegistrationGate } from "../../../src/idp/registration/gate.ts";
import { checkRegistration, type RegistrationPolicy } from "../../../src/idp/registration/policy.ts";

const loopback: RegistrationPolicy = { mode: "loopback", trustedHosts: [], mcpScopes: MCP_SCOPES };
const trusted: RegistrationPolicy = {
  mode: "trusted-hosts",
  trustedHosts: ["app.example.com"],
  mcpScopes: MCP_SCOPES,
};
const client = (redirect_uris: unknown, extra: Record<string, unknown> = {}) => ({ redirect_uris, ...extra });
const ruleOf = (verdict: ReturnType<typeof checkRegistration>) =>
  verdict.ok ? "accepted" : /\[rule ([a-z-]+)\]/.exec(verdict.description)?.[1];

describe("registration policy", () => {
  it("accepts the three loopback hosts on any port, as a native public client without scope metadata", () => {
    const verdict = checkRegistration(
      client(["http://127.0.0.1:1/cb", "http://localhost:65535/cb", "http://[::1]:8080/cb"], {
        scope: "mcp:tools offline_access",
      }),
      loopback,
    );
    assert.ok(verdict.ok);
    assert.equal(
      verdict.metadata.token_endpoint_auth_method,
      "none",
      "left out: none, not client_secret_basic",
    );
    assert.equal(verdict.metadata.application_type, "native");
    assert.equal(verdict.metadata.scope, undefined);
    assert.deepEqual(verdict.metadata.grant_types, ["authorization_code", "refresh_token"]);
  });

  it("refuses what is not loopback in loopback mode, naming the rule", () => {
    assert.equal(
      ruleOf(checkRegistration(client(["https://localhost/cb"]), loopback)),
      "redirect-uri-not-loopback",
    );
    assert.equal(
      ruleOf(checkRegistration(client(["http://127.0.0.2/cb"]), loopback)),
      "redirect-uri-not-loopback",
    );
    assert.equal(
      ruleOf(checkRegistration(client(["http://localhost.evil.com/cb"]), loopback)),
      "redirect-uri-not-loopback",
    );
    assert.equal(
      ruleOf(checkRegistration(client(["http://localhost/cb#x"]), loopback)),
      "redirect-uri-malformed",
    );
    assert.equal(
      ruleOf(checkRegistration(client(["http://u:p@localhost/cb"]), loopback)),
      "redirect-uri-malformed",
    );
    assert.equal(ruleOf(checkRegistration(client("http://localhost/cb"), loopback)), "redirect-uri-missing");
    assert.equal(ruleOf(checkRegistration(client([42]), loopback)), "redirect-uri-malformed");
  });

  it("in trusted-hosts mode, accepts https on a listed host only, never http off loopback", () => {
    const ok = checkRegistration(client(["https://APP.example.com/cb"]), trusted);
    assert.ok(ok.ok);
    assert.equal(ok.metadata.application_type, "web");
    assert.equal(
      ruleOf(checkRegistration(client(["https://other.example.com/cb"]), trusted)),
      "redirect-uri-host-not-trusted",
    );
    assert.equal(
      ruleOf(checkRegistration(client(["http://app.example.com/cb"]), trusted)),
      "redirect-uri-not-allowed",
    );
  });

  it("refuses everything when off", () => {
    assert.equal(
      ruleOf(checkRegistration(client(["http://localhost/cb"]), { ...loopback, mode: "off" })),
      "registration-off",
    );
  });

  it("the gate limits registrations per address in a window, then lets them through again", () => {
    let now = 0;
    const gate = createRegistrationGate({ policy: loopback, perAddress: 2, windowMs: 1000, now: () => now });
    const body = Buffer.from(JSON.stringify(client(["http://localhost/cb"])));
    assert.ok(gate("a", "application/json", body).ok);
    assert.ok(gate("a", "application/json", body).ok);
    const limited = gate("a", "application/json", body);
    assert.ok(!limited.ok && limited.status === 429 && limited.headers["retry-after"] === "1");
    assert.ok(gate("b", "application/json", body).ok, "per address");
    now = 1000;
    assert.ok(gate("a", "application/json", body).ok, "a new window");
    const form = gate("c", "application/x-www-form-urlencoded", body);
    assert.ok(!form.ok && form.status === 400 && /metadata-malformed/.test(form.body.error_description));
  });
});
