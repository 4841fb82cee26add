import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  clientNameProblem,
  domainMatches,
  hostListedExactly,
  hostTrusted,
  isLoopbackHost,
  parseDomainList,
  trustedDomainProblem,
  variantSettings,
} from "../../../src/idp/cimd/model.ts";
import { CIMD_PRESETS } from "../../../src/idp/cimd/presets.ts";

describe("trusted-domain matching (Keycloak's)", () => {
  it("matches the exact host, any case", () => {
    assert.ok(domainMatches("claude.ai", "claude.ai"));
    assert.ok(domainMatches("Claude.AI", "claude.ai"));
    assert.ok(!domainMatches("claude.ai", "www.claude.ai"));
    assert.ok(!domainMatches("claude.ai", "evilclaude.ai"));
    assert.ok(!domainMatches("claude.ai", "claude.ai.evil.example"));
  });

  it("matches *.example.org for the domain and all its subdomains", () => {
    assert.ok(domainMatches("*.example.org", "example.org"));
    assert.ok(domainMatches("*.example.org", "a.example.org"));
    assert.ok(domainMatches("*.example.org", "a.b.example.org"));
    assert.ok(!domainMatches("*.example.org", "badexample.org"));
    assert.ok(!domainMatches("*.example.org", "example.org.evil"));
  });

  it("matches IP literals, IPv6 with or without brackets", () => {
    assert.ok(domainMatches("127.0.0.1", "127.0.0.1"));
    assert.ok(domainMatches("::1", "[::1]"));
    assert.ok(domainMatches("[::1]", "::1"));
  });

  it("an empty list trusts nothing", () => {
    assert.ok(!hostTrusted([], "claude.ai"));
    assert.ok(!domainMatches("", ""));
  });

  it("tells an explicit listing from a wildcard one", () => {
    assert.ok(hostListedExactly(["localhost"], "localhost"));
    assert.ok(!hostListedExactly(["*.localhost"], "localhost"));
    assert.ok(hostTrusted(["*.localhost"], "localhost"));
  });

  it("knows the loopback hosts", () => {
    for (const host of ["localhost", "127.0.0.1", "[::1]", "LOCALHOST"])
      assert.ok(isLoopbackHost(host), host);
    for (const host of ["127.0.0.2", "localhost.example", "0.0.0.0"]) assert.ok(!isLoopbackHost(host), host);
  });
});

describe("trusted-domain entries", () => {
  it("accepts host names, wildcards and IP literals", () => {
    for (const entry of ["claude.ai", "*.example.org", "localhost", "127.0.0.1", "::1", "[::1]", "a-b.c"])
      assert.equal(trustedDomainProblem(entry), undefined, entry);
  });

  it("refuses URLs, ports, bad wildcards and empty entries with a reason", () => {
    assert.match(trustedDomainProblem("https://claude.ai") ?? "", /not a URL/);
    assert.match(trustedDomainProblem("claude.ai:443") ?? "", /port/);
    assert.match(trustedDomainProblem("a.*.org") ?? "", /wildcard/);
    assert.match(trustedDomainProblem("*") ?? "", /not a valid host name|wildcard/);
    assert.match(trustedDomainProblem("bad_host") ?? "", /not a valid host name/);
    assert.match(trustedDomainProblem(" ") ?? "", /empty/);
  });

  it("parses comma-separated lists", () => {
    assert.deepEqual(parseDomainList(" Claude.ai, localhost,,127.0.0.1 ,localhost"), [
      "claude.ai",
      "localhost",
      "127.0.0.1",
    ]);
  });
});

describe("names, variants and presets", () => {
  it("checks client names", () => {
    assert.equal(clientNameProblem("claude-code"), undefined);
    assert.match(clientNameProblem("-x") ?? "", /client name/);
    assert.match(clientNameProblem("a b") ?? "", /client name/);
  });

  it("has the HTTPS and HTTP variants of the specification", () => {
    assert.deepEqual(variantSettings(false), { allowHttpScheme: false, uriSchemes: ["https"] });
    assert.deepEqual(variantSettings(true), { allowHttpScheme: true, uriSchemes: ["https", "http"] });
  });

  it("has Keycloak's MCP guide values for Claude Code and VS Code, and Codex CLI's", () => {
    assert.deepEqual(CIMD_PRESETS["claude-code"], {
      id: "claude-code",
      label: "Claude Code",
      clientId: "https://claude.ai/oauth/claude-code-client-metadata",
      trustedDomains: ["claude.ai", "localhost", "127.0.0.1"],
      policyDomains: ["claude.ai"],
    });
    assert.deepEqual(CIMD_PRESETS.vscode, {
      id: "vscode",
      label: "VS Code",
      clientId: "https://vscode.dev/oauth/client-metadata.json",
      trustedDomains: ["vscode.dev", "code.visualstudio.com", "localhost", "127.0.0.1"],
      policyDomains: ["vscode.dev"],
    });
    // The client_id Codex CLI sends (read from the @openai/codex 0.171.0 binary), loopback callbacks.
    assert.deepEqual(CIMD_PRESETS.codex, {
      id: "codex",
      label: "Codex CLI",
      clientId: "https://chatgpt.com/oauth/codex/client.json",
      trustedDomains: ["chatgpt.com", "localhost", "127.0.0.1"],
      policyDomains: ["chatgpt.com"],
    });
  });
});
