import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { RunningService } from "../../src/service.ts";
import { loadPortalFixture } from "../support/fixture.ts";
import { startTestService } from "../support/service.ts";
import { createTestStore, STORE_KINDS, type TestStore } from "../support/stores.ts";
import { startTestIssuer, type TestIssuer } from "../support/test-issuer.ts";

/**
 * Every refusal of a request body, word for word: the body-taking routes (gate rule update, users, API
 * keys, CIMD clients) answer each bad body with the sentence, rule and field they have always answered,
 * whichever code checks it. Also the order against the other checks: an unknown gate rule is 404 before
 * its body is judged, a user's or CIMD client's existence only after.
 */
const USERS = "/rest/admin/users";
const RIGHTS = "/rest/admin/users/nobody/rights";
const PASSWORD = "/rest/admin/users/nobody/password";
const API_KEYS = "/rest/admin/api-keys";
const CIMD = "/rest/admin/cimd-policies";
const CIMD_NOBODY = "/rest/admin/cimd-policies/nobody";
const GATE = "/rest/gates/no-unfixable-vulnerability";
const CLIENT_ID = "https://example.org/c.json";

/** A body sent as this text (not JSON.stringify of a value). */
const raw = (text: string) => ({ [RAW]: text });
const RAW = Symbol("raw body");

type Refusal = [
  method: string,
  path: string,
  body: unknown,
  status: number,
  detail: string,
  extra?: { rule?: string; field?: string },
];

/** Each answered by today's code with exactly this (recorded before the bodies were checked from their schema). */
const REFUSALS: Refusal[] = [
  // POST /rest/admin/users
  [
    "POST",
    USERS,
    ["x"],
    400,
    "The request body must be a JSON object (rule body-object)",
    { rule: "body-object" },
  ],
  [
    "POST",
    USERS,
    raw('"x"'),
    400,
    "The request body must be a JSON object (rule body-object)",
    { rule: "body-object" },
  ],
  [
    "POST",
    USERS,
    raw("5"),
    400,
    "The request body must be a JSON object (rule body-object)",
    { rule: "body-object" },
  ],
  [
    "POST",
    USERS,
    raw("null"),
    400,
    "Invalid user name '': 1 to 64 characters among letters, digits, '.', '_', '-' and '@' (rule invalid-username)",
    { rule: "invalid-username", field: "username" },
  ],
  [
    "POST",
    USERS,
    undefined,
    400,
    "Invalid user name '': 1 to 64 characters among letters, digits, '.', '_', '-' and '@' (rule invalid-username)",
    { rule: "invalid-username", field: "username" },
  ],
  [
    "POST",
    USERS,
    {},
    400,
    "Invalid user name '': 1 to 64 characters among letters, digits, '.', '_', '-' and '@' (rule invalid-username)",
    { rule: "invalid-username", field: "username" },
  ],
  [
    "POST",
    USERS,
    { username: "dave", role: "viewer", colour: 1 },
    400,
    "Unknown property 'colour': expected username, password, role, applications (rule unknown-property)",
    { rule: "unknown-property", field: "colour" },
  ],
  [
    "POST",
    USERS,
    { username: 5, role: "viewer" },
    400,
    "username must be a string (rule type-string)",
    { rule: "type-string", field: "username" },
  ],
  [
    "POST",
    USERS,
    { username: "da ve", role: "viewer" },
    400,
    "Invalid user name 'da ve': 1 to 64 characters among letters, digits, '.', '_', '-' and '@' (rule invalid-username)",
    { rule: "invalid-username", field: "username" },
  ],
  [
    "POST",
    USERS,
    { username: "dave" },
    400,
    "role must be admin or viewer (rule invalid-role)",
    { rule: "invalid-role", field: "role" },
  ],
  [
    "POST",
    USERS,
    { username: "dave", role: "root" },
    400,
    "role must be admin or viewer (rule invalid-role)",
    { rule: "invalid-role", field: "role" },
  ],
  [
    "POST",
    USERS,
    { username: "dave", role: 5 },
    400,
    "role must be admin or viewer (rule invalid-role)",
    { rule: "invalid-role", field: "role" },
  ],
  [
    "POST",
    USERS,
    { username: "dave", role: "viewer", applications: "shop" },
    400,
    "applications must be a list of strings (rule type-string-list)",
    { rule: "type-string-list", field: "applications" },
  ],
  [
    "POST",
    USERS,
    { username: "dave", role: "viewer", applications: [5] },
    400,
    "applications must be a list of strings (rule type-string-list)",
    { rule: "type-string-list", field: "applications" },
  ],
  [
    "POST",
    USERS,
    { username: "dave", role: "viewer", applications: ["a`b"] },
    400,
    "The application name must not contain a back-quote (`) (rule invalid-application)",
    { rule: "invalid-application", field: "applications" },
  ],
  [
    "POST",
    USERS,
    { username: "dave", role: "viewer", applications: [" "] },
    400,
    "The application name is empty (rule invalid-application)",
    { rule: "invalid-application", field: "applications" },
  ],
  [
    "POST",
    USERS,
    { username: "dave", role: "viewer", password: 5 },
    400,
    "password must be a string (rule type-string)",
    { rule: "type-string", field: "password" },
  ],
  [
    "POST",
    USERS,
    { username: "dave", role: "viewer", password: "short" },
    400,
    "The password must be at least 12 characters long (it has 5) (rule weak-password)",
    { rule: "weak-password", field: "password" },
  ],
  [
    "POST",
    USERS,
    { username: "da ve", role: "root" },
    400,
    "Invalid user name 'da ve': 1 to 64 characters among letters, digits, '.', '_', '-' and '@' (rule invalid-username)",
    { rule: "invalid-username", field: "username" },
  ],
  [
    "POST",
    USERS,
    { role: "root", colour: 1 },
    400,
    "Unknown property 'colour': expected username, password, role, applications (rule unknown-property)",
    { rule: "unknown-property", field: "colour" },
  ],
  // PUT /rest/admin/users/nobody/rights
  [
    "PUT",
    RIGHTS,
    ["x"],
    400,
    "The request body must be a JSON object (rule body-object)",
    { rule: "body-object" },
  ],
  [
    "PUT",
    RIGHTS,
    {},
    400,
    "role must be admin or viewer (rule invalid-role)",
    { rule: "invalid-role", field: "role" },
  ],
  [
    "PUT",
    RIGHTS,
    { role: "viewer", x: 1 },
    400,
    "Unknown property 'x': expected role, applications (rule unknown-property)",
    { rule: "unknown-property", field: "x" },
  ],
  [
    "PUT",
    RIGHTS,
    { role: "root" },
    400,
    "role must be admin or viewer (rule invalid-role)",
    { rule: "invalid-role", field: "role" },
  ],
  [
    "PUT",
    RIGHTS,
    { role: "viewer", applications: 5 },
    400,
    "applications must be a list of strings (rule type-string-list)",
    { rule: "type-string-list", field: "applications" },
  ],
  [
    "PUT",
    RIGHTS,
    { role: "viewer", applications: ["a`b"] },
    400,
    "The application name must not contain a back-quote (`) (rule invalid-application)",
    { rule: "invalid-application", field: "applications" },
  ],
  ["PUT", RIGHTS, { role: "viewer" }, 404, "No user named 'nobody' (see: imaging users list)"],
  // POST /rest/admin/users/nobody/password
  [
    "POST",
    PASSWORD,
    ["x"],
    400,
    "The request body must be a JSON object (rule body-object)",
    { rule: "body-object" },
  ],
  [
    "POST",
    PASSWORD,
    { x: 1 },
    400,
    "Unknown property 'x': expected password (rule unknown-property)",
    { rule: "unknown-property", field: "x" },
  ],
  [
    "POST",
    PASSWORD,
    { password: 5 },
    400,
    "password must be a string (rule type-string)",
    { rule: "type-string", field: "password" },
  ],
  [
    "POST",
    PASSWORD,
    { password: "short" },
    400,
    "The password must be at least 12 characters long (it has 5) (rule weak-password)",
    { rule: "weak-password", field: "password" },
  ],
  ["POST", PASSWORD, {}, 404, "No user named 'nobody' (see: imaging users list)"],
  // POST /rest/admin/api-keys
  [
    "POST",
    API_KEYS,
    ["x"],
    400,
    "The request body must be a JSON object (rule body-object)",
    { rule: "body-object" },
  ],
  [
    "POST",
    API_KEYS,
    {},
    400,
    "user must be 1 to 256 characters, not only spaces (rule invalid-user)",
    { rule: "invalid-user", field: "user" },
  ],
  [
    "POST",
    API_KEYS,
    { user: "  " },
    400,
    "user must be 1 to 256 characters, not only spaces (rule invalid-user)",
    { rule: "invalid-user", field: "user" },
  ],
  [
    "POST",
    API_KEYS,
    { user: 5 },
    400,
    "user must be a string (rule type-string)",
    { rule: "type-string", field: "user" },
  ],
  [
    "POST",
    API_KEYS,
    { user: "x".repeat(257) },
    400,
    "user must be 1 to 256 characters, not only spaces (rule invalid-user)",
    { rule: "invalid-user", field: "user" },
  ],
  [
    "POST",
    API_KEYS,
    { user: "bob", role: "root" },
    400,
    "role must be admin or viewer, got 'root' (rule invalid-role)",
    { rule: "invalid-role", field: "role" },
  ],
  [
    "POST",
    API_KEYS,
    { user: "bob", role: 5 },
    400,
    "role must be a string (rule type-string)",
    { rule: "type-string", field: "role" },
  ],
  [
    "POST",
    API_KEYS,
    { user: "bob", applications: "shop" },
    400,
    "applications must be a list of strings (rule type-string-list)",
    { rule: "type-string-list", field: "applications" },
  ],
  [
    "POST",
    API_KEYS,
    { user: "bob", applications: ["a`b"] },
    400,
    "The application name must not contain a back-quote (`) (rule invalid-application)",
    { rule: "invalid-application", field: "applications" },
  ],
  [
    "POST",
    API_KEYS,
    { user: "bob", x: 1 },
    400,
    "Unknown property 'x': expected user, role, applications (rule unknown-property)",
    { rule: "unknown-property", field: "x" },
  ],
  [
    "POST",
    API_KEYS,
    { user: "", role: "root" },
    400,
    "user must be 1 to 256 characters, not only spaces (rule invalid-user)",
    { rule: "invalid-user", field: "user" },
  ],
  // POST /rest/admin/cimd-policies
  [
    "POST",
    CIMD,
    ["x"],
    400,
    "The request body must be a JSON object (rule body-object)",
    { rule: "body-object" },
  ],
  [
    "POST",
    CIMD,
    raw('"x"'),
    400,
    "The request body must be a JSON object (rule body-object)",
    { rule: "body-object" },
  ],
  [
    "POST",
    CIMD,
    {},
    400,
    "client (a short name, e.g. claude-code) is required (rule client-name)",
    { rule: "client-name", field: "client" },
  ],
  [
    "POST",
    CIMD,
    { preset: "cursor" },
    400,
    "preset must be claude-code or vscode or codex, got 'cursor' (rule preset-unknown)",
    { rule: "preset-unknown", field: "preset" },
  ],
  [
    "POST",
    CIMD,
    { preset: 5 },
    400,
    "preset must be a string (rule type-string)",
    { rule: "type-string", field: "preset" },
  ],
  [
    "POST",
    CIMD,
    { client: 5, clientId: CLIENT_ID },
    400,
    "client must be a string (rule type-string)",
    { rule: "type-string", field: "client" },
  ],
  [
    "POST",
    CIMD,
    { client: "dev", clientId: 5 },
    400,
    "clientId must be a string (rule type-string)",
    { rule: "type-string", field: "clientId" },
  ],
  [
    "POST",
    CIMD,
    { client: "dev", clientId: CLIENT_ID, trustedDomains: "x" },
    400,
    "trustedDomains must be a list of strings (rule type-string-list)",
    { rule: "type-string-list", field: "trustedDomains" },
  ],
  [
    "POST",
    CIMD,
    { client: "dev", clientId: CLIENT_ID, policyDomains: [1] },
    400,
    "policyDomains must be a list of strings (rule type-string-list)",
    { rule: "type-string-list", field: "policyDomains" },
  ],
  [
    "POST",
    CIMD,
    { client: "dev", clientId: CLIENT_ID, http: "yes" },
    400,
    "http must be true or false (rule type-boolean)",
    { rule: "type-boolean", field: "http" },
  ],
  [
    "POST",
    CIMD,
    { preset: "vscode", colour: "red" },
    400,
    "Unknown property 'colour': expected client, preset, clientId, trustedDomains, policyDomains, http (rule unknown-property)",
    { rule: "unknown-property", field: "colour" },
  ],
  [
    "POST",
    CIMD,
    { client: "dev", clientId: CLIENT_ID, trustedDomains: ["https://x"] },
    400,
    "trustedDomains: trusted domain 'https://x' must be a host name, not a URL (e.g. claude.ai) (rule trusted-domain)",
    { rule: "trusted-domain", field: "trustedDomains" },
  ],
  [
    "POST",
    CIMD,
    { client: 5, preset: 5 },
    400,
    "client must be a string (rule type-string)",
    { rule: "type-string", field: "client" },
  ],
  // PATCH /rest/admin/cimd-policies/nobody
  [
    "PATCH",
    CIMD_NOBODY,
    ["x"],
    400,
    "The request body must be a JSON object (rule body-object)",
    { rule: "body-object" },
  ],
  [
    "PATCH",
    CIMD_NOBODY,
    {},
    400,
    "Nothing to change: give at least one setting (rule nothing-to-change)",
    { rule: "nothing-to-change" },
  ],
  [
    "PATCH",
    CIMD_NOBODY,
    { x: 1 },
    400,
    "Unknown property 'x': expected clientId, trustedDomains, policyDomains, http, enabled, restrictSameDomain, onlyAllowConfidentialClient (rule unknown-property)",
    { rule: "unknown-property", field: "x" },
  ],
  [
    "PATCH",
    CIMD_NOBODY,
    { clientId: 5 },
    400,
    "clientId must be a string (rule type-string)",
    { rule: "type-string", field: "clientId" },
  ],
  [
    "PATCH",
    CIMD_NOBODY,
    { trustedDomains: "x" },
    400,
    "trustedDomains must be a list of strings (rule type-string-list)",
    { rule: "type-string-list", field: "trustedDomains" },
  ],
  [
    "PATCH",
    CIMD_NOBODY,
    { policyDomains: [1] },
    400,
    "policyDomains must be a list of strings (rule type-string-list)",
    { rule: "type-string-list", field: "policyDomains" },
  ],
  [
    "PATCH",
    CIMD_NOBODY,
    { http: "yes" },
    400,
    "http must be true or false (rule type-boolean)",
    { rule: "type-boolean", field: "http" },
  ],
  [
    "PATCH",
    CIMD_NOBODY,
    { enabled: 1 },
    400,
    "enabled must be true or false (rule type-boolean)",
    { rule: "type-boolean", field: "enabled" },
  ],
  [
    "PATCH",
    CIMD_NOBODY,
    { restrictSameDomain: "no" },
    400,
    "restrictSameDomain must be true or false (rule type-boolean)",
    { rule: "type-boolean", field: "restrictSameDomain" },
  ],
  [
    "PATCH",
    CIMD_NOBODY,
    { onlyAllowConfidentialClient: null },
    400,
    "onlyAllowConfidentialClient must be true or false (rule type-boolean)",
    { rule: "type-boolean", field: "onlyAllowConfidentialClient" },
  ],
  [
    "PATCH",
    CIMD_NOBODY,
    { trustedDomains: ["https://x"] },
    400,
    "trustedDomains: trusted domain 'https://x' must be a host name, not a URL (e.g. claude.ai) (rule trusted-domain)",
    { rule: "trusted-domain", field: "trustedDomains" },
  ],
  ["PATCH", CIMD_NOBODY, { enabled: false }, 404, "No CIMD client named nobody (see: imaging cimd list)"],
  [
    "PATCH",
    CIMD_NOBODY,
    { trustedDomains: ["https://x"], http: "yes" },
    400,
    "trustedDomains: trusted domain 'https://x' must be a host name, not a URL (e.g. claude.ai) (rule trusted-domain)",
    { rule: "trusted-domain", field: "trustedDomains" },
  ],
  // PUT /rest/gates/no-unfixable-vulnerability
  [
    "PUT",
    GATE,
    ["x"],
    400,
    'The request body must be a JSON object such as {"enabled": false} or {"parameters": {...}}',
  ],
  [
    "PUT",
    GATE,
    raw('"x"'),
    400,
    'The request body must be a JSON object such as {"enabled": false} or {"parameters": {...}}',
  ],
  [
    "PUT",
    GATE,
    raw("5"),
    400,
    'The request body must be a JSON object such as {"enabled": false} or {"parameters": {...}}',
  ],
  [
    "PUT",
    GATE,
    raw("null"),
    400,
    'The request body must be a JSON object such as {"enabled": false} or {"parameters": {...}}',
  ],
  [
    "PUT",
    GATE,
    undefined,
    400,
    'The request body must be a JSON object such as {"enabled": false} or {"parameters": {...}}',
  ],
  ["PUT", GATE, {}, 400, "The request body must set 'enabled', 'parameters' or both"],
  ["PUT", GATE, { enabled: "yes" }, 400, "'enabled' must be a boolean (true or false), got \"yes\""],
  ["PUT", GATE, { enabled: null }, 400, "'enabled' must be a boolean (true or false), got null"],
  ["PUT", GATE, { parameters: 5 }, 400, "'parameters' must be a JSON object, got 5"],
  ["PUT", GATE, { parameters: null }, 400, "'parameters' must be a JSON object, got null"],
  ["PUT", GATE, { parameters: [] }, 400, "'parameters' must be a JSON object, got an array"],
  ["PUT", GATE, { kind: "x" }, 400, "Unknown property 'kind': the body accepts 'enabled' and 'parameters'"],
  [
    "PUT",
    GATE,
    { enabled: true, kind: "x" },
    400,
    "Unknown property 'kind': the body accepts 'enabled' and 'parameters'",
  ],
  [
    "PUT",
    GATE,
    { ["k".repeat(150)]: 1 },
    400,
    `Unknown property '${"k".repeat(100)}': the body accepts 'enabled' and 'parameters'`,
  ],
  [
    "PUT",
    GATE,
    { parameters: { minSeverity: "LOW" } },
    409,
    "Unknown parameter 'minSeverity' for rules of kind 'no-unfixable-vulnerability': expected 'packages'",
  ],
  // PUT /rest/gates/no-referenced-severe-cve
  [
    "PUT",
    "/rest/gates/no-referenced-severe-cve",
    { parameters: { minSeverity: "x" } },
    400,
    "Parameter 'minSeverity' must be a string, one of CRITICAL, HIGH, MEDIUM, LOW, got \"x\"",
  ],
  [
    "PUT",
    "/rest/gates/no-referenced-severe-cve",
    { parameters: { maxReleases: 3 } },
    409,
    "Unknown parameter 'maxReleases' for rules of kind 'no-referenced-severe-cve': expected 'minSeverity', 'packages'",
  ],
  // PUT /rest/gates/no-such-rule
  ["PUT", "/rest/gates/no-such-rule", { enabled: "yes" }, 404, "No quality gate rule with id 'no-such-rule'"],
  ["PUT", "/rest/gates/no-such-rule", ["x"], 404, "No quality gate rule with id 'no-such-rule'"],
  // PUT /rest/gates/Not%20An%20Id
  [
    "PUT",
    "/rest/gates/Not%20An%20Id",
    ["x"],
    400,
    "'Not An Id' is not a gate rule id: expected lower-case letters, digits and dashes",
  ],
  // PUT /rest/gates/no-unfixable-vulnerability
  [
    "PUT",
    GATE,
    { kind: 1, enabled: "x" },
    400,
    "Unknown property 'kind': the body accepts 'enabled' and 'parameters'",
  ],
];

for (const kind of STORE_KINDS) {
  describe(`REST request bodies refused with the same words, on ${kind}`, () => {
    let store: TestStore;
    let issuer: TestIssuer;
    let service: RunningService;
    let adminToken: string;

    const send = (method: string, path: string, body: unknown) => {
      const text =
        body === undefined
          ? undefined
          : typeof body === "object" && body !== null && RAW in body
            ? String((body as Record<symbol, string>)[RAW])
            : JSON.stringify(body);
      return fetch(`${service.gatewayUrl}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${adminToken}`,
          ...(text === undefined ? {} : { "content-type": "application/json" }),
        },
        ...(text === undefined ? {} : { body: text }),
      });
    };

    before(async () => {
      issuer = await startTestIssuer();
      store = await createTestStore(kind);
      service = await startTestService(store, { issuer: issuer.issuer }, (handle) =>
        loadPortalFixture(handle.db),
      );
      adminToken = await issuer.sign({ sub: "alice", roles: ["admin"], applications: [] });
    });
    after(async () => {
      await service?.stop();
      await issuer?.close();
      await store?.drop();
    });

    it(`answers each of ${REFUSALS.length} bad bodies with its status, sentence, rule and field`, async () => {
      const gatesBefore = await (await send("GET", "/rest/gates", undefined)).text();
      for (const [method, path, body, status, detail, extra = {}] of REFUSALS) {
        const what = `${method} ${path} ${typeof body === "object" && body !== null && RAW in body ? "(raw)" : JSON.stringify(body)}`;
        const response = await send(method, path, body);
        assert.equal(response.status, status, what);
        assert.match(response.headers.get("content-type") ?? "", /^application\/problem\+json/, what);
        const problem = (await response.json()) as Record<string, unknown>;
        assert.equal(problem.status, status, what);
        assert.equal(problem.detail, detail, what);
        assert.equal(problem.rule, extra.rule, what);
        assert.equal(problem.field, extra.field, what);
      }
      // Nothing was changed by the refused requests.
      assert.equal(await (await send("GET", "/rest/gates", undefined)).text(), gatesBefore);
      const users = (await (await send("GET", USERS, undefined)).json()) as { users: unknown[] };
      assert.deepEqual(users.users, []);
      assert.deepEqual(await (await send("GET", API_KEYS, undefined)).json(), []);
      assert.deepEqual(await (await send("GET", CIMD, undefined)).json(), []);
    });

    it("with several faults answers the first in one order: not an object, an unknown property, then the fields as declared", async () => {
      const first = async (method: string, path: string, body: unknown) => {
        const response = await send(method, path, body);
        assert.equal(response.status, 400, JSON.stringify(body));
        return ((await response.json()) as { detail: string }).detail;
      };
      // An unknown property is named before any field's fault, wherever it sits in the body.
      for (const body of [
        { enabled: "x", kind: 1 },
        { kind: 1, enabled: "x" },
      ])
        assert.equal(
          await first("PUT", GATE, body),
          "Unknown property 'kind': the body accepts 'enabled' and 'parameters'",
        );
      // Then the fields in their declared order (the order "Unknown property" lists them in).
      assert.equal(
        await first("PUT", GATE, { parameters: 5, enabled: "x" }),
        `'enabled' must be a boolean (true or false), got "x"`,
      );
      assert.equal(
        await first("POST", USERS, {
          applications: ["a`b"],
          role: "root",
          password: "short",
          username: "dave",
        }),
        "The password must be at least 12 characters long (it has 5) (rule weak-password)",
      );
      assert.equal(
        await first("PATCH", CIMD_NOBODY, { trustedDomains: "x", clientId: 5 }),
        "clientId must be a string (rule type-string)",
      );
      assert.equal(
        await first("POST", API_KEYS, { applications: 5, role: "root", user: " ", colour: 1 }),
        "Unknown property 'colour': expected user, role, applications (rule unknown-property)",
      );
    });
  });
}
