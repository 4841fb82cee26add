import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { redirectUriMatches } from "../../../src/idp/cimd/redirect.ts";
import { claudeCodeDocument, vscodeDocument } from "./fixtures.ts";

describe("redirectUriMatches", () => {
  const claude = claudeCodeDocument().redirect_uris;
  const vscode = vscodeDocument().redirect_uris;

  it("matches Claude Code's portless loopback URIs on the random port it listens on", () => {
    assert.ok(redirectUriMatches(claude, "http://localhost:53682/callback"));
    assert.ok(redirectUriMatches(claude, "http://127.0.0.1:49152/callback"));
    assert.ok(redirectUriMatches(claude, "http://localhost/callback"));
  });

  it("matches VS Code's loopback URI on any port, and its web redirect exactly", () => {
    assert.ok(redirectUriMatches(vscode, "http://127.0.0.1:33418/"));
    assert.ok(redirectUriMatches(vscode, "http://127.0.0.1:40123/"));
    assert.ok(redirectUriMatches(vscode, "https://vscode.dev/redirect"));
    assert.ok(!redirectUriMatches(vscode, "https://vscode.dev:8443/redirect"));
    assert.ok(!redirectUriMatches(vscode, "https://vscode.dev/redirect/"));
    assert.ok(!redirectUriMatches(vscode, "http://localhost:33418/"), "localhost is not 127.0.0.1");
  });

  it("still requires the same path and query on loopback", () => {
    assert.ok(!redirectUriMatches(claude, "http://localhost:53682/callback/"));
    assert.ok(!redirectUriMatches(claude, "http://localhost:53682/other"));
    assert.ok(!redirectUriMatches(claude, "http://localhost:53682/callback?x=1"));
    assert.ok(!redirectUriMatches(claude, "http://localhost:53682/callback?"));
    assert.ok(redirectUriMatches(["http://localhost/cb?a=1"], "http://localhost:9/cb?a=1"));
  });

  it("ignores the port only for http loopback", () => {
    assert.ok(!redirectUriMatches(claude, "https://localhost:53682/callback"));
    assert.ok(!redirectUriMatches(["https://claude.ai/cb"], "https://claude.ai:444/cb"));
    assert.ok(!redirectUriMatches(["http://dev.example/cb"], "http://dev.example:8080/cb"));
  });

  it("matches IPv6 loopback on any port", () => {
    assert.ok(redirectUriMatches(["http://[::1]/callback"], "http://[::1]:5000/callback"));
  });

  it("refuses lookalikes, userinfo and fragments", () => {
    assert.ok(!redirectUriMatches(claude, "http://localhost.evil.example:53682/callback"));
    assert.ok(!redirectUriMatches(claude, "http://evil@localhost:53682/callback"));
    assert.ok(!redirectUriMatches(claude, "http://localhost:53682/callback#x"));
    assert.ok(!redirectUriMatches(claude, "not a url"));
    assert.ok(!redirectUriMatches([], "http://localhost/callback"));
  });
});
