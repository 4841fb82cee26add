import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  challengeCheck,
  challengeMatches,
  discoveryCheck,
  discoveryProbePaths,
  gatewayCheck,
  jsonNotFoundCheck,
  MCP_ROUTES,
  type McpRoute,
  resourceMetadataCheck,
} from "../../../src/doctor/gateway.ts";
import { answered, unanswered } from "./observations.ts";

const BASE = "https://gw.example.com";
const ISSUER = `${BASE}/auth/realms/imaging`;
const [MCP, GATEKEEPER] = MCP_ROUTES as [McpRoute, McpRoute];

describe("gateway: the gateway answers at base_url", () => {
  const url = `${BASE}/mcp/healthcheck`;
  it("passes on 200 JSON with status UP", () => {
    const check = gatewayCheck(
      answered(url, 200, {
        status: "UP",
        service: "imaging-services",
        details: { version: "3.6.6-funcrel" },
      }),
    );
    assert.equal(check.verdict, "pass");
    assert.match(check.detail, /200, status UP \(imaging-services 3\.6\.6-funcrel\)/);
  });

  it("warns when parts behind it are DOWN", () => {
    const check = gatewayCheck(
      answered(url, 200, {
        status: "DEGRADED",
        service: "imaging-services",
        details: { upstreams: { rest: "UP", "mcp-analysis": "DOWN" } },
      }),
    );
    assert.equal(check.verdict, "warn");
    assert.match(check.detail, /DOWN: mcp-analysis/);
  });

  it("fails when nothing answers, or something else does", () => {
    assert.match(gatewayCheck(unanswered(url)).fix ?? "", /^Start the gateway/);
    const other = gatewayCheck(answered(url, 404, { error: "not_found" }));
    assert.equal(other.verdict, "fail");
    assert.match(other.fix ?? "", /never at an MCP server/);
    assert.equal(gatewayCheck(answered(url, 200, "<html></html>")).verdict, "fail");
  });
});

describe("challenge: unauthenticated POST gets the Bearer challenge", () => {
  const exact = `Bearer resource_metadata="${BASE}/.well-known/oauth-protected-resource/mcp"`;
  it("matches the specification's value exactly, optionally followed by a scope", () => {
    assert.ok(challengeMatches(exact, BASE, MCP));
    assert.ok(challengeMatches(`${exact}, scope="mcp:tools mcp:resources"`, BASE, MCP));
    assert.ok(!challengeMatches(`${exact}, error="invalid_token"`, BASE, MCP));
    assert.ok(
      !challengeMatches(
        `Bearer realm="x", resource_metadata="${BASE}/.well-known/oauth-protected-resource/mcp"`,
        BASE,
        MCP,
      ),
    );
    assert.ok(!challengeMatches(exact, BASE, GATEKEEPER));
    assert.ok(
      challengeMatches(
        `Bearer resource_metadata="${BASE}/.well-known/oauth-protected-resource/mcp/gatekeeper"`,
        BASE,
        GATEKEEPER,
      ),
    );
  });

  it("passes on 401 with the exact challenge", () => {
    const check = challengeCheck(MCP, BASE, answered(`${BASE}/mcp`, 401, {}, { wwwAuthenticate: exact }));
    assert.equal(check.id, "challenge-mcp");
    assert.equal(check.verdict, "pass");
  });

  it("fails when an MCP server answers without a challenge: the client does not point at the gateway", () => {
    const check = challengeCheck(GATEKEEPER, BASE, answered(`${BASE}/mcp/gatekeeper`, 200, "event: message"));
    assert.equal(check.id, "challenge-gatekeeper");
    assert.equal(check.verdict, "fail");
    assert.match(check.detail, /an MCP server answered without asking for a token/);
    assert.match(check.fix ?? "", /never at an MCP server or the identity provider directly/);
  });

  it("fails naming PUBLIC_URL when the challenge points at another base_url", () => {
    const check = challengeCheck(
      MCP,
      BASE,
      answered(
        `${BASE}/mcp`,
        401,
        {},
        {
          wwwAuthenticate:
            'Bearer resource_metadata="http://gw:8090/.well-known/oauth-protected-resource/mcp"',
        },
      ),
    );
    assert.equal(check.verdict, "fail");
    assert.match(
      check.detail,
      /names resource_metadata="http:\/\/gw:8090\/.*", expected "https:\/\/gw\.example\.com\//,
    );
    assert.match(check.fix ?? "", /^Set PUBLIC_URL/);
  });
});

describe("resource-metadata: the protected resource metadata documents", () => {
  const url = `${BASE}/.well-known/oauth-protected-resource/mcp`;
  const document = (overrides: Record<string, unknown> = {}) => ({
    resource: `${BASE}/mcp`,
    authorization_servers: [ISSUER],
    scopes_supported: ["mcp:tools"],
    ...overrides,
  });
  it("passes when resource is the exact MCP URL and authorization_servers is [issuer]", () => {
    assert.equal(resourceMetadataCheck(MCP, BASE, ISSUER, answered(url, 200, document())).verdict, "pass");
  });

  it("fails saying PUBLIC_URL differs when resource names another base_url", () => {
    const check = resourceMetadataCheck(
      MCP,
      BASE,
      ISSUER,
      answered(
        url,
        200,
        document({
          resource: "http://10.0.0.5:8090/mcp",
          authorization_servers: ["http://10.0.0.5:8090/auth/realms/imaging"],
        }),
      ),
    );
    assert.equal(check.verdict, "fail");
    assert.match(
      check.detail,
      /the gateway's base_url is http:\/\/10\.0\.0\.5:8090, this command's is https:\/\/gw\.example\.com \(PUBLIC_URL, --local or --port differs\)/,
    );
    assert.match(
      check.detail,
      /authorization_servers is \["http:\/\/10\.0\.0\.5:8090\/auth\/realms\/imaging"\]/,
    );
    assert.match(check.fix ?? "", /^Set PUBLIC_URL/);
  });

  it("fails when the gatekeeper document names the analysis resource", () => {
    const check = resourceMetadataCheck(
      GATEKEEPER,
      BASE,
      ISSUER,
      answered(`${url}/gatekeeper`, 200, document()),
    );
    assert.equal(check.verdict, "fail");
    assert.match(check.detail, /expected https:\/\/gw\.example\.com\/mcp\/gatekeeper/);
  });

  it("fails on a 404 or HTML: not the gateway", () => {
    assert.equal(
      resourceMetadataCheck(MCP, BASE, ISSUER, answered(url, 404, { error: "not_found" })).verdict,
      "fail",
    );
    assert.equal(
      resourceMetadataCheck(MCP, BASE, ISSUER, answered(url, 200, "<!doctype html>")).verdict,
      "fail",
    );
  });
});

describe("discovery: probes answer the identity provider's JSON, never HTML", () => {
  const ok = (path: string) => ({
    path,
    observation: answered(
      `${BASE}${path}`,
      200,
      { issuer: ISSUER },
      {
        redirects: [`${ISSUER}/.well-known/openid-configuration`],
        finalUrl: `${ISSUER}/.well-known/openid-configuration`,
      },
    ),
  });
  it("probes the three path-inserted URLs of each route", () => {
    assert.deepEqual(discoveryProbePaths(GATEKEEPER), [
      "/.well-known/oauth-authorization-server/mcp/gatekeeper",
      "/.well-known/openid-configuration/mcp/gatekeeper",
      "/mcp/gatekeeper/.well-known/openid-configuration",
    ]);
  });

  it("passes when every probe ends at a JSON document of the issuer", () => {
    const check = discoveryCheck(MCP, ISSUER, discoveryProbePaths(MCP).map(ok));
    assert.equal(check.verdict, "pass");
  });

  it("fails on HTML, naming the client's JSON parse error on '<'", () => {
    const [first, ...rest] = discoveryProbePaths(MCP);
    const check = discoveryCheck(MCP, ISSUER, [
      { path: first as string, observation: answered(`${BASE}${first}`, 200, "<html>sign in</html>") },
      ...rest.map(ok),
    ]);
    assert.equal(check.verdict, "fail");
    assert.match(check.detail, /HTML where an AI client expects JSON \(its JSON parse error on '<'\)/);
    assert.match(check.fix ?? "", /never at an MCP server/);
  });

  it("fails on a JSON 404 that was not redirected, and on another issuer", () => {
    const [first, second, third] = discoveryProbePaths(MCP) as [string, string, string];
    const check = discoveryCheck(MCP, ISSUER, [
      { path: first, observation: answered(`${BASE}${first}`, 404, { error: "not_found" }) },
      ok(second),
      {
        path: third,
        observation: answered(`${BASE}${third}`, 200, { issuer: "http://other/auth/realms/imaging" }),
      },
    ]);
    assert.equal(check.verdict, "fail");
    assert.match(check.detail, /not redirected to the identity provider's discovery document/);
    assert.match(check.detail, /issuer "http:\/\/other\/auth\/realms\/imaging", expected/);
  });

  it("blames the identity provider when the redirect worked but its answer did not", () => {
    const path = discoveryProbePaths(MCP)[0] as string;
    const check = discoveryCheck(MCP, ISSUER, [
      {
        path,
        observation: answered(`${BASE}${path}`, 502, { error: "bad_gateway" }, { redirects: [ISSUER] }),
      },
    ]);
    assert.equal(check.verdict, "fail");
    assert.match(check.fix ?? "", /^Make sure the identity provider runs/);
  });
});

describe("json-not-found: other well-known paths and /register", () => {
  it("passes on JSON 404s, fails on HTML, warns on another JSON status", () => {
    const json404 = answered("x", 404, { error: "not_found" });
    assert.equal(
      jsonNotFoundCheck([{ method: "POST", path: "/register", observation: json404 }]).verdict,
      "pass",
    );
    const html = jsonNotFoundCheck([
      { method: "POST", path: "/register", observation: answered("x", 404, "<html>Not Found</html>") },
    ]);
    assert.equal(html.verdict, "fail");
    assert.match(html.detail, /JSON parse error on '<'/);
    assert.equal(
      jsonNotFoundCheck([{ method: "GET", path: "/.well-known/x", observation: answered("x", 200, {}) }])
        .verdict,
      "warn",
    );
  });
});
