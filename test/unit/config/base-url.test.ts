import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { resolveBaseUrl } from "../../../src/config/base-url.ts";

const linux = { https: false, port: 8090, fqdn: "gw.example.com", platform: "linux" as const };

describe("base_url rules", () => {
  it("uses PUBLIC_URL when set, without a trailing slash", () => {
    assert.deepEqual(resolveBaseUrl({ ...linux, publicUrl: "http://gw.corp.example:8090/" }), {
      ok: true,
      baseUrl: "http://gw.corp.example:8090",
    });
  });

  it("omits port 443 from an https PUBLIC_URL", () => {
    assert.deepEqual(resolveBaseUrl({ ...linux, publicUrl: "https://gw.example.com:443" }), {
      ok: true,
      baseUrl: "https://gw.example.com",
    });
  });

  it("derives https://<fqdn> when HTTPS is configured on 443", () => {
    assert.deepEqual(resolveBaseUrl({ ...linux, https: true, port: 443 }), {
      ok: true,
      baseUrl: "https://gw.example.com",
    });
  });

  it("keeps a non-default https port", () => {
    assert.deepEqual(resolveBaseUrl({ ...linux, https: true, port: 8443 }), {
      ok: true,
      baseUrl: "https://gw.example.com:8443",
    });
  });

  it("derives http://<fqdn>:8090 otherwise", () => {
    assert.deepEqual(resolveBaseUrl(linux), { ok: true, baseUrl: "http://gw.example.com:8090" });
  });

  it("refuses to guess on Windows over http and says what to set", () => {
    const result = resolveBaseUrl({ ...linux, platform: "win32" });
    assert.equal(result.ok, false);
    assert.match(
      result.ok ? "" : result.reason,
      /PUBLIC_URL=http:\/\/<gateway-fqdn>:8090.*restart the gateway services/,
    );
  });

  it("does not need PUBLIC_URL on Windows with HTTPS", () => {
    assert.deepEqual(resolveBaseUrl({ ...linux, platform: "win32", https: true, port: 443 }), {
      ok: true,
      baseUrl: "https://gw.example.com",
    });
  });

  for (const bad of [
    "gw.example.com:8090",
    "ftp://gw.example.com",
    "http://gw.example.com:8090/mcp",
    "http://u:p@gw:8090",
  ]) {
    it(`rejects PUBLIC_URL ${bad} with a reason`, () => {
      const result = resolveBaseUrl({ ...linux, publicUrl: bad });
      assert.equal(result.ok, false);
      assert.match(result.ok ? "" : result.reason, /PUBLIC_URL/);
    });
  }

  it("--local puts base_url on localhost at the configured port, over https too, and PUBLIC_URL still wins", () => {
    assert.deepEqual(resolveBaseUrl({ ...linux, port: 18100, local: true }), {
      ok: true,
      baseUrl: "http://localhost:18100",
    });
    assert.deepEqual(resolveBaseUrl({ ...linux, https: true, port: 443, local: true }), {
      ok: true,
      baseUrl: "https://localhost",
    });
    assert.deepEqual(resolveBaseUrl({ ...linux, local: true, publicUrl: "http://gw.example.com:9000" }), {
      ok: true,
      baseUrl: "http://gw.example.com:9000",
    });
    assert.deepEqual(resolveBaseUrl({ ...linux, platform: "win32", local: true }), {
      ok: true,
      baseUrl: "http://localhost:8090",
    });
  });
});
