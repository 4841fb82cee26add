import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { internalBindCheck, isLoopbackAddress, windowsPublicUrlCheck } from "../../../src/doctor/setup.ts";

describe("windows-public-url: Windows installation accessed over http", () => {
  it("fails on Windows over http without PUBLIC_URL, with the specification's fix", () => {
    const check = windowsPublicUrlCheck({ platform: "win32", https: false, publicUrl: undefined });
    assert.equal(check.id, "windows-public-url");
    assert.equal(check.verdict, "fail");
    assert.match(check.detail, /without PUBLIC_URL/);
    assert.equal(
      check.fix,
      "Create a SYSTEM environment variable PUBLIC_URL=http://<gateway-fqdn>:8090 (this machine's fully qualified domain name and the user access port), then restart the gateway services.",
    );
  });

  it("passes on Windows over http with PUBLIC_URL, naming it", () => {
    const check = windowsPublicUrlCheck({
      platform: "win32",
      https: false,
      publicUrl: "http://gw.example.com:8090",
    });
    assert.equal(check.verdict, "pass");
    assert.equal(check.detail, "PUBLIC_URL=http://gw.example.com:8090");
    assert.equal(check.fix, null);
  });

  it("warns when PUBLIC_URL is not a fully qualified name other machines can use", () => {
    for (const publicUrl of ["http://localhost:8090", "http://gateway:8090"])
      assert.equal(windowsPublicUrlCheck({ platform: "win32", https: false, publicUrl }).verdict, "warn");
    assert.equal(
      windowsPublicUrlCheck({ platform: "win32", https: false, publicUrl: "http://10.1.2.3:8090" }).verdict,
      "pass",
    );
  });

  it("does not apply to a gateway started with --local: base_url is localhost, nothing to derive", () => {
    const check = windowsPublicUrlCheck({
      platform: "win32",
      https: false,
      publicUrl: undefined,
      local: true,
    });
    assert.equal(check.verdict, "n/a");
    assert.match(check.detail, /^--local: base_url is http:\/\/localhost:<port>/);
  });

  it("does not apply with HTTPS configured, nor outside Windows (a Docker installation)", () => {
    assert.equal(
      windowsPublicUrlCheck({ platform: "win32", https: true, publicUrl: undefined }).verdict,
      "n/a",
    );
    for (const platform of ["linux", "darwin"] as const)
      assert.equal(windowsPublicUrlCheck({ platform, https: false, publicUrl: undefined }).verdict, "n/a");
  });
});

describe("internal-bind: MCP servers not reachable around the gateway", () => {
  it("knows loopback addresses", () => {
    for (const a of ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost"])
      assert.ok(isLoopbackAddress(a), a);
    for (const a of ["0.0.0.0", "::", "10.0.0.5", "gw.example.com"]) assert.ok(!isLoopbackAddress(a), a);
  });

  it("passes when internal listeners bind to loopback", () => {
    const check = internalBindCheck({ internalBindAddress: "127.0.0.1", upstreams: [], exposed: [] });
    assert.equal(check.verdict, "pass");
  });

  it("says where the internal ports were tried when they did not answer", () => {
    const check = internalBindCheck({
      internalBindAddress: "127.0.0.1",
      upstreams: [],
      exposed: [],
      probedAddresses: ["192.0.2.2", "fd00::2"],
    });
    assert.equal(check.verdict, "pass");
    assert.match(
      check.detail,
      /their ports do not answer at 192\.0\.2\.2, fd00::2 \(non-loopback addresses\)/,
    );
  });

  it("warns, with the fix, when they bind to every interface", () => {
    const check = internalBindCheck({ internalBindAddress: "0.0.0.0", upstreams: [], exposed: [] });
    assert.equal(check.verdict, "warn");
    assert.match(check.detail, /INTERNAL_BIND_ADDRESS=0\.0\.0\.0/);
    assert.match(check.detail, /401\/403/);
    assert.match(check.fix ?? "", /^Set INTERNAL_BIND_ADDRESS=127\.0\.0\.1/);
  });

  it("warns about MCP servers on other hosts and internal endpoints that answered from outside", () => {
    const check = internalBindCheck({
      internalBindAddress: "127.0.0.1",
      upstreams: [
        { setting: "MCP_ANALYSIS_UPSTREAM_URL", url: "http://mcp.internal:8282" },
        { setting: "MCP_GATEKEEPER_UPSTREAM_URL", url: "http://127.0.0.1:8283" },
      ],
      exposed: ["http://gw.example.com:8282/healthz"],
    });
    assert.equal(check.verdict, "warn");
    assert.match(check.detail, /MCP_ANALYSIS_UPSTREAM_URL=http:\/\/mcp\.internal:8282/);
    assert.doesNotMatch(check.detail, /MCP_GATEKEEPER_UPSTREAM_URL/);
    assert.match(check.detail, /http:\/\/gw\.example\.com:8282\/healthz answered from here/);
  });
});
