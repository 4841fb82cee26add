import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MCP_SCOPES } from "../../../src/contracts/platform.ts";
import { createRegistrationGate } from "../../../src/idp/registration/gate.ts";
import { checkRegistration, type RegistrationPolicy } from "../../../src/idp/registration/policy.ts";
import { memoryRegistrationCounts, rateLimitKey } from "../../../src/idp/registration/rate-limit.ts";

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

  it("the gate limits registrations per address in a window, then lets them through again", async () => {
    let now = 0;
    const gate = createRegistrationGate({ policy: loopback, perAddress: 2, windowMs: 1000, now: () => now });
    const body = Buffer.from(JSON.stringify(client(["http://localhost/cb"])));
    assert.ok((await gate("a", "application/json", body)).ok);
    assert.ok((await gate("a", "application/json", body)).ok);
    const limited = await gate("a", "application/json", body);
    assert.ok(!limited.ok && limited.status === 429 && limited.headers["retry-after"] === "1");
    assert.ok((await gate("b", "application/json", body)).ok, "per address");
    now = 1000;
    assert.ok((await gate("a", "application/json", body)).ok, "a new window");
    const form = await gate("c", "application/x-www-form-urlencoded", body);
    assert.ok(!form.ok && form.status === 400 && /metadata-malformed/.test(form.body.error_description));
  });

  it("counts IPv6 senders by /64 and IPv4 senders by address (also IPv4-mapped)", async () => {
    assert.equal(rateLimitKey("2001:db8:1:2:aaaa::1"), "2001:db8:1:2::/64");
    assert.equal(rateLimitKey("2001:0db8:0001:0002:ffff:ffff:ffff:ffff"), "2001:db8:1:2::/64");
    assert.equal(rateLimitKey("fe80::1%eth0"), "fe80::/64");
    assert.equal(rateLimitKey("::ffff:192.0.2.7"), "192.0.2.7");
    assert.equal(rateLimitKey("192.0.2.7"), "192.0.2.7");
    assert.equal(rateLimitKey(""), "");

    const gate = createRegistrationGate({ policy: loopback, perAddress: 2 });
    const body = Buffer.from(JSON.stringify(client(["http://localhost/cb"])));
    assert.ok((await gate("2001:db8:1:2::1", "application/json", body)).ok);
    assert.ok((await gate("2001:db8:1:2::2", "application/json", body)).ok);
    const limited = await gate("2001:db8:1:2:ffff:1:2:3", "application/json", body);
    assert.ok(!limited.ok && limited.status === 429, "a new address in the same /64 is the same sender");
    assert.match(limited.body.error_description, /too many registrations from 2001:db8:1:2::\/64/);
    assert.ok((await gate("2001:db8:1:3::1", "application/json", body)).ok, "the next /64 is another sender");
    assert.ok((await gate("192.0.2.1", "application/json", body)).ok);
    assert.ok((await gate("::ffff:192.0.2.1", "application/json", body)).ok);
    assert.equal(
      (await gate("192.0.2.1", "application/json", body)).ok,
      false,
      "IPv4-mapped is the same address",
    );
    assert.ok(
      (await gate("192.0.2.2", "application/json", body)).ok,
      "IPv4: the next address is another sender",
    );
  });

  it("past 10,000 senders, forgets the oldest counters one by one, not everyone's", async () => {
    const gate = createRegistrationGate({ policy: loopback, perAddress: 1 });
    const body = Buffer.from(JSON.stringify(client(["http://localhost/cb"])));
    const sender = (i: number) =>
      `2001:db8:${Math.floor(i / 65536).toString(16)}:${(i % 65536).toString(16)}::1`;
    for (let i = 0; i < 10_000; i++) assert.ok((await gate(sender(i), "application/json", body)).ok);
    // One sender more: the oldest counter goes, the others stay.
    assert.ok((await gate(sender(10_000), "application/json", body)).ok);
    for (const i of [1, 2, 5_000, 9_999, 10_000]) {
      const again = await gate(sender(i), "application/json", body);
      assert.equal(again.ok ? 201 : again.status, 429, `sender ${i} is still limited`);
    }
    assert.ok((await gate(sender(0), "application/json", body)).ok, "the oldest was forgotten");
  });

  it("memory counters: a sender starting a new window becomes the newest", async () => {
    const counts = memoryRegistrationCounts(2);
    assert.equal(await counts.take("a", 0, 100, 1), undefined);
    assert.equal(await counts.take("b", 10, 100, 1), undefined);
    assert.equal(await counts.take("a", 100, 100, 1), undefined, "a's new window");
    assert.equal(await counts.take("c", 110, 100, 1), undefined, "evicts b, the oldest window");
    assert.equal(await counts.take("a", 120, 100, 1), 1, "a is still counted");
    assert.equal(await counts.take("b", 120, 100, 1), undefined, "b was forgotten");
  });
});

describe("registration policy: every URI of the metadata", () => {
  const mcpRemote = client(["http://localhost:3334/oauth/callback"]);

  it("applies the redirect policy to post_logout_redirect_uris, refusing with invalid_redirect_uri", () => {
    const evil = checkRegistration(
      { ...mcpRemote, post_logout_redirect_uris: ["https://evil.example/x"] },
      loopback,
    );
    assert.ok(!evil.ok);
    assert.equal(evil.error, "invalid_redirect_uri");
    assert.equal(evil.rule, "redirect-uri-not-loopback");
    assert.match(evil.description, /^post_logout_redirect_uris: https:\/\/evil\.example\/x/);
    const untrusted = checkRegistration(
      { ...mcpRemote, post_logout_redirect_uris: ["https://evil.example/x"] },
      trusted,
    );
    assert.equal(ruleOf(untrusted), "redirect-uri-host-not-trusted");
    assert.equal(
      ruleOf(checkRegistration({ ...mcpRemote, post_logout_redirect_uris: "http://localhost/x" }, loopback)),
      "redirect-uri-malformed",
    );
    assert.equal(
      ruleOf(
        checkRegistration(
          { ...mcpRemote, post_logout_redirect_uris: Array.from({ length: 11 }, () => "http://localhost/x") },
          loopback,
        ),
      ),
      "metadata-oversized",
    );
    const fine = checkRegistration(
      { ...mcpRemote, post_logout_redirect_uris: ["http://127.0.0.1:9/bye", "https://app.example.com/bye"] },
      trusted,
    );
    assert.ok(fine.ok);
    assert.deepEqual(fine.metadata.post_logout_redirect_uris, [
      "http://127.0.0.1:9/bye",
      "https://app.example.com/bye",
    ]);
  });

  it("applies it to the other URIs the browser is sent to (invalid_client_metadata)", () => {
    for (const field of ["initiate_login_uri", "frontchannel_logout_uri"]) {
      const refused = checkRegistration({ ...mcpRemote, [field]: "https://evil.example/x" }, loopback);
      assert.ok(!refused.ok, field);
      assert.equal(refused.error, "invalid_client_metadata");
      assert.equal(refused.rule, "redirect-uri-not-loopback");
      assert.ok(checkRegistration({ ...mcpRemote, [field]: "https://app.example.com/x" }, trusted).ok, field);
    }
  });

  it("refuses URIs the provider would fetch or call, and URI fields it does not know, even on loopback", () => {
    for (const field of [
      "sector_identifier_uri",
      "backchannel_logout_uri",
      "backchannel_client_notification_endpoint",
      "software_callback_uri",
    ]) {
      const refused = checkRegistration({ ...mcpRemote, [field]: "http://127.0.0.1:5432/" }, loopback);
      assert.ok(!refused.ok, field);
      assert.equal(refused.error, "invalid_client_metadata");
      assert.equal(refused.rule, "uri-field-refused", field);
    }
    assert.equal(
      ruleOf(checkRegistration({ ...mcpRemote, request_uris: ["http://127.0.0.1/r"] }, loopback)),
      "uri-field-refused",
    );
    assert.equal(
      ruleOf(checkRegistration({ ...mcpRemote, jwks_uri: "http://127.0.0.1/jwks" }, loopback)),
      "confidential-client-refused",
    );
  });

  it("registers none of the informative URIs (language-tagged ones too) nor URI fields sent as null", () => {
    const verdict = checkRegistration(
      {
        ...mcpRemote,
        client_name: "MCP CLI Proxy",
        client_uri: "https://github.com/modelcontextprotocol/mcp-cli",
        logo_uri: "https://evil.example/logo.png",
        "logo_uri#ja": "https://evil.example/logo-ja.png",
        policy_uri: "https://evil.example/policy",
        tos_uri: "https://evil.example/tos",
        post_logout_redirect_uris: null,
        initiate_login_uri: null,
        jwks_uri: null,
      },
      loopback,
    );
    assert.ok(verdict.ok, JSON.stringify(verdict));
    for (const registered of [verdict.metadata, verdict.request]) {
      assert.deepEqual(
        Object.keys(registered).filter((k) => k.includes("uri") && k !== "redirect_uris"),
        [],
      );
      assert.equal(registered.client_name, "MCP CLI Proxy");
    }
    assert.equal(verdict.request.token_endpoint_auth_method, "none");
  });
});

describe("registration policy: nested metadata", () => {
  // 5,000 nested arrays: 10 KB, under the size limit, and deep enough to overflow JSON.stringify.
  const nested = `{"redirect_uris":["http://localhost/cb"],"x":${"[".repeat(5000)}${"]".repeat(5000)}}`;

  it("refuses a 10 KB body of 5,000 nested arrays with invalid_client_metadata, before measuring it", async () => {
    assert.ok(Buffer.byteLength(nested) > 10_000 && Buffer.byteLength(nested) < 16 * 1024);
    const verdict = checkRegistration(JSON.parse(nested), loopback);
    assert.ok(!verdict.ok);
    assert.equal(verdict.error, "invalid_client_metadata");
    assert.equal(verdict.rule, "metadata-too-deep");
    const answer = await createRegistrationGate({ policy: loopback })(
      "a",
      "application/json",
      Buffer.from(nested),
    );
    assert.ok(!answer.ok);
    assert.equal(answer.status, 400);
    assert.equal(answer.body.error, "invalid_client_metadata");
    assert.match(answer.body.error_description, /\[rule metadata-too-deep\]/);
  });

  it("accepts metadata as deep as RFC 7591 defines it, refuses one level past the bound", () => {
    let deep: unknown = "x";
    for (let i = 0; i < 7; i++) deep = [deep];
    assert.ok(
      checkRegistration({ redirect_uris: ["http://localhost/cb"], software_data: deep }, loopback).ok,
    );
    assert.equal(
      ruleOf(checkRegistration({ redirect_uris: ["http://localhost/cb"], software_data: [deep] }, loopback)),
      "metadata-too-deep",
    );
  });
});
