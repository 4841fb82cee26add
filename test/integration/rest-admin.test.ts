import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { verifyCredentials } from "../../src/domain/users.ts";
import type { RunningService } from "../../src/service.ts";
import { runCli } from "../support/cli.ts";
import { loadPortalFixture } from "../support/fixture.ts";
import { startTestService } from "../support/service.ts";
import { createTestStore, STORE_KINDS, type TestStore } from "../support/stores.ts";
import { startTestIssuer, type TestIssuer } from "../support/test-issuer.ts";

interface Problem {
  status: number;
  detail: string;
  rule?: string;
  field?: string;
}

interface CimdClientJson {
  client: string;
  clientId: string | null;
  enabled: boolean;
  linked: boolean;
  variant: string;
  preset: string | null;
  problems: string[];
  notes: string[];
  profile: { name: string; allowHttpScheme: boolean; trustedDomains: string[]; restrictSameDomain: boolean };
  policy: {
    name: string;
    uriSchemes: string[];
    trustedDomains: string[];
    profiles: string[];
    enabled: boolean;
  };
}

for (const kind of STORE_KINDS) {
  describe(`REST administration endpoints on ${kind} (embedded identity provider's store)`, () => {
    let store: TestStore;
    let issuer: TestIssuer;
    let service: RunningService;
    let adminToken: string;
    let viewerToken: string;

    const call = async (method: string, path: string, body?: unknown, token: string | null = adminToken) =>
      fetch(`${service.gatewayUrl}${path}`, {
        method,
        headers: {
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    const ok = async <T>(response: Response | Promise<Response>, status = 200): Promise<T> => {
      const r = await response;
      assert.equal(r.status, status, await r.clone().text());
      return (status === 204 ? undefined : await r.json()) as T;
    };
    const refused = async (response: Response | Promise<Response>, status: number, detail: RegExp) => {
      const r = await response;
      assert.equal(r.status, status, await r.clone().text());
      assert.match(r.headers.get("content-type") ?? "", /^application\/problem\+json/);
      const body = (await r.json()) as Problem;
      assert.equal(body.status, status);
      assert.match(body.detail, detail);
      return body;
    };
    const cli = (...args: string[]) =>
      runCli([...args, "--json"], {
        IMAGING_DATA_DIR: store.dataDir,
        ...(store.databaseUrl ? { DATABASE_URL: store.databaseUrl } : {}),
      });

    before(async () => {
      issuer = await startTestIssuer();
      store = await createTestStore(kind);
      service = await startTestService(store, { issuer: issuer.issuer }, (handle) =>
        loadPortalFixture(handle.db),
      );
      adminToken = await issuer.sign({ sub: "alice", roles: ["admin"], applications: [] });
      viewerToken = await issuer.sign({ sub: "bob", roles: ["viewer"], applications: ["portal"] });
    });
    after(async () => {
      await service?.stop();
      await issuer?.close();
      await store?.drop();
    });

    it("refuses viewers (403) and anonymous callers (401) on every administration operation", async () => {
      const operations: [string, string, unknown?][] = [
        ["GET", "/rest/admin/cimd-presets"],
        ["GET", "/rest/admin/cimd-policies"],
        ["POST", "/rest/admin/cimd-policies", { preset: "claude-code" }],
        ["GET", "/rest/admin/cimd-policies/claude-code"],
        ["PATCH", "/rest/admin/cimd-policies/claude-code", { enabled: false }],
        ["POST", "/rest/admin/cimd-policies/claude-code/link"],
        ["POST", "/rest/admin/cimd-policies/claude-code/unlink"],
        ["DELETE", "/rest/admin/cimd-policies/claude-code"],
        ["GET", "/rest/admin/users"],
        ["POST", "/rest/admin/users", { username: "mallory", role: "admin" }],
        ["PUT", "/rest/admin/users/bob/rights", { role: "admin" }],
        ["POST", "/rest/admin/users/admin/password", {}],
        ["DELETE", "/rest/admin/users/admin"],
        ["GET", "/rest/admin/api-keys"],
        ["POST", "/rest/admin/api-keys", { user: "bob", role: "admin" }],
        ["DELETE", "/rest/admin/api-keys/0123456789abcdef"],
      ];
      for (const [method, path, body] of operations) {
        await refused(call(method, path, body, viewerToken), 403, /^Only administrators may manage /);
        await refused(call(method, path, body, null), 401, /Authentication required/);
      }
      // Nothing was created by the refused calls.
      assert.deepEqual(await ok(call("GET", "/rest/admin/cimd-policies")), []);
      assert.deepEqual(await ok(call("GET", "/rest/admin/api-keys")), []);
    });

    describe("CIMD client policies", () => {
      it("lists the presets", async () => {
        const presets = await ok<{ id: string; clientId: string }[]>(call("GET", "/rest/admin/cimd-presets"));
        assert.deepEqual(
          presets.map((p) => [p.id, p.clientId]),
          [
            ["claude-code", "https://claude.ai/oauth/claude-code-client-metadata"],
            ["vscode", "https://vscode.dev/oauth/client-metadata.json"],
            ["codex", "https://chatgpt.com/oauth/codex/client.json"],
          ],
        );
      });

      it("creates from a preset ({ preset }), linked, HTTPS variant, and imaging cimd sees the same pair", async () => {
        const created = await ok<CimdClientJson>(
          call("POST", "/rest/admin/cimd-policies", { preset: "claude-code" }),
          201,
        );
        assert.equal(created.client, "claude-code");
        assert.equal(created.clientId, "https://claude.ai/oauth/claude-code-client-metadata");
        assert.equal(created.preset, "claude-code");
        assert.equal(created.variant, "https");
        assert.equal(created.linked, true);
        assert.equal(created.enabled, true);
        assert.deepEqual(created.problems, []);
        assert.deepEqual(created.profile.trustedDomains, ["claude.ai", "localhost", "127.0.0.1"]);
        assert.deepEqual(created.policy.trustedDomains, ["claude.ai"]);
        assert.deepEqual(created.policy.uriSchemes, ["https"]);
        assert.deepEqual(created.policy.profiles, ["cimd-profile-claude-code"]);

        const shown = await cli("cimd", "show", "claude-code");
        assert.equal(shown.code, 0, shown.stderr);
        const fromCli = JSON.parse(shown.stdout) as {
          profile: { trustedDomains: string[]; allowHttpScheme: boolean };
          policy: { trustedDomains: string[]; uriSchemes: string[]; profiles: string[] };
        };
        assert.deepEqual(fromCli.profile.trustedDomains, created.profile.trustedDomains);
        assert.equal(fromCli.profile.allowHttpScheme, false);
        assert.deepEqual(fromCli.policy.profiles, created.policy.profiles);

        await refused(
          call("POST", "/rest/admin/cimd-policies", { preset: "claude-code" }),
          409,
          /claude-code/,
        );
      });

      it("validation errors name the rule and the field", async () => {
        const cases: [unknown, string, string, RegExp][] = [
          [
            { client: "dev", clientId: "http://127.0.0.1:9/client.json" },
            "client-id-scheme",
            "clientId",
            /must use https, or choose the HTTP variant/,
          ],
          [
            { client: "dev", clientId: "https://example.org/" },
            "client-id-path",
            "clientId",
            /must contain a path/,
          ],
          [{ client: "dev", clientId: "https://example.org/c?x=1" }, "client-id-query", "clientId", /query/],
          [
            {
              client: "dev",
              clientId: "https://example.org/c.json",
              trustedDomains: ["https://example.org"],
            },
            "trusted-domain",
            "trustedDomains",
            /must be a host name, not a URL/,
          ],
          [
            { client: "dev", clientId: "https://example.org/c.json", policyDomains: [] },
            "domain-list-empty",
            "policyDomains",
            /at least one domain/,
          ],
          [{ preset: "cursor" }, "preset-unknown", "preset", /preset must be claude-code or vscode or codex/],
          [
            { client: "-bad", clientId: "https://example.org/c.json" },
            "client-name",
            "client",
            /client name/,
          ],
          [{ client: "dev" }, "client-id-required", "clientId", /clientId is required/],
          [{ preset: "vscode", colour: "red" }, "unknown-property", "colour", /Unknown property 'colour'/],
          [["claude-code"], "body-object", "", /must be a JSON object/],
        ];
        for (const [body, rule, field, detail] of cases) {
          const problem = await refused(call("POST", "/rest/admin/cimd-policies", body), 400, detail);
          assert.equal(problem.rule, rule, JSON.stringify(body));
          assert.match(problem.detail, new RegExp(`\\(rule ${rule}\\)$`));
          if (field) assert.equal(problem.field, field);
        }
        assert.equal((await ok<unknown[]>(call("GET", "/rest/admin/cimd-policies"))).length, 1);
      });

      it("creates by hand in the HTTP variant, with its development-only note", async () => {
        const created = await ok<CimdClientJson>(
          call("POST", "/rest/admin/cimd-policies", {
            client: "dev",
            clientId: "http://127.0.0.1:9/client.json",
            http: true,
          }),
          201,
        );
        assert.equal(created.variant, "http");
        assert.equal(created.preset, null);
        assert.equal(created.profile.allowHttpScheme, true);
        assert.deepEqual(created.policy.uriSchemes, ["https", "http"]);
        assert.deepEqual(created.profile.trustedDomains, ["127.0.0.1", "localhost"]);
        assert.deepEqual(created.policy.trustedDomains, ["127.0.0.1"]);
        assert.ok(
          created.notes.some((n) => /HTTP variant .* development or test only/.test(n)),
          created.notes.join(),
        );
      });

      it("unlinks (CIMD ignored), links, edits lists and switches, disables, and removes", async () => {
        const unlinked = await ok<CimdClientJson>(call("POST", "/rest/admin/cimd-policies/dev/unlink"));
        assert.equal(unlinked.linked, false);
        assert.deepEqual(unlinked.policy.profiles, []);
        assert.ok(
          unlinked.problems.some((p) => /CIMD is ignored/.test(p)),
          unlinked.problems.join(),
        );
        const linked = await ok<CimdClientJson>(call("POST", "/rest/admin/cimd-policies/dev/link"));
        assert.equal(linked.linked, true);
        assert.deepEqual(linked.problems, []);

        const edited = await ok<CimdClientJson>(
          call("PATCH", "/rest/admin/cimd-policies/dev", {
            trustedDomains: ["127.0.0.1", "localhost", "*.example.org"],
            restrictSameDomain: true,
            enabled: false,
          }),
        );
        assert.deepEqual(edited.profile.trustedDomains, ["127.0.0.1", "localhost", "*.example.org"]);
        assert.equal(edited.profile.restrictSameDomain, true);
        assert.equal(edited.enabled, false);
        assert.ok(edited.problems.some((p) => /policy cimd-policy-dev is disabled/.test(p)));

        // As `imaging cimd set dev --https`: allowed, and the diagnosis says why sign-in would now fail.
        const httpsOnly = await ok<CimdClientJson>(
          call("PATCH", "/rest/admin/cimd-policies/dev", { http: false }),
        );
        assert.ok(
          httpsOnly.problems.some((p) => /client_id uses http but Allow http scheme is OFF/.test(p)),
          httpsOnly.problems.join(),
        );
        const wrong = await refused(
          call("PATCH", "/rest/admin/cimd-policies/dev", { clientId: "http://127.0.0.1:9/other.json" }),
          400,
          /must use https/,
        );
        assert.equal(wrong.rule, "client-id-scheme");
        const https = await ok<CimdClientJson>(
          call("PATCH", "/rest/admin/cimd-policies/dev", {
            http: false,
            clientId: "https://dev.example.org/client.json",
            policyDomains: ["dev.example.org"],
            enabled: true,
          }),
        );
        assert.equal(https.variant, "https");
        assert.equal(https.clientId, "https://dev.example.org/client.json");
        await refused(call("PATCH", "/rest/admin/cimd-policies/dev", {}), 400, /Nothing to change/);
        await refused(call("PATCH", "/rest/admin/cimd-policies/nope", { enabled: true }), 404, /nope/);

        const listed = await cli("cimd", "list");
        assert.equal(listed.code, 0, listed.stderr);
        assert.deepEqual(
          (JSON.parse(listed.stdout) as { client: string; clientId: string }[]).map((c) => [
            c.client,
            c.clientId,
          ]),
          [
            ["claude-code", "https://claude.ai/oauth/claude-code-client-metadata"],
            ["dev", "https://dev.example.org/client.json"],
          ],
        );

        await ok(call("DELETE", "/rest/admin/cimd-policies/dev"), 204);
        await refused(call("GET", "/rest/admin/cimd-policies/dev"), 404, /No CIMD client named dev/);
        await refused(call("DELETE", "/rest/admin/cimd-policies/dev"), 404, /No CIMD client named dev/);
        const remaining = await ok<CimdClientJson[]>(call("GET", "/rest/admin/cimd-policies"));
        assert.deepEqual(
          remaining.map((c) => c.client),
          ["claude-code"],
        );
      });
    });

    describe("users", () => {
      it("adds a user with a generated password shown once, which then signs in", async () => {
        const created = await ok<{ username: string; roles: string[]; generatedPassword: string }>(
          call("POST", "/rest/admin/users", { username: "carol", role: "viewer", applications: ["portal"] }),
          201,
        );
        assert.deepEqual(created.roles, ["viewer"]);
        assert.ok(created.generatedPassword.length >= 12);
        assert.ok(await verifyCredentials(service.store.db, "carol", created.generatedPassword));
        const { users, idp, readOnly, usersConsoleUrl } = await ok<{
          users: { username: string; applications: string[]; generatedPassword?: string }[];
          idp: string;
          readOnly: boolean;
          usersConsoleUrl: string | null;
        }>(call("GET", "/rest/admin/users"));
        assert.deepEqual([idp, readOnly, usersConsoleUrl], ["embedded", false, null]);
        const carol = users.find((u) => u.username === "carol");
        assert.deepEqual(carol?.applications, ["portal"]);
        assert.equal(carol?.generatedPassword, undefined);
        assert.ok(!JSON.stringify(users).includes(created.generatedPassword));
        await refused(
          call("POST", "/rest/admin/users", { username: "CAROL", role: "viewer" }),
          409,
          /carol/i,
        );
      });

      it("refuses bad input naming the rule", async () => {
        const weak = await refused(
          call("POST", "/rest/admin/users", { username: "dave", role: "viewer", password: "short" }),
          400,
          /password/i,
        );
        assert.equal(weak.rule, "weak-password");
        const role = await refused(
          call("POST", "/rest/admin/users", { username: "dave", role: "root" }),
          400,
          /role must be admin or viewer/,
        );
        assert.equal(role.field, "role");
        const name = await refused(
          call("POST", "/rest/admin/users", { username: "da ve", role: "viewer" }),
          400,
          /Invalid user name/,
        );
        assert.equal(name.rule, "invalid-username");
      });

      it("grants applications, resets the password and removes the user", async () => {
        const granted = await ok<{ roles: string[]; applications: string[] }>(
          call("PUT", "/rest/admin/users/carol/rights", { role: "viewer", applications: ["portal", "shop"] }),
        );
        assert.deepEqual(granted.applications, ["portal", "shop"]);
        const password = "a-new-password-for-carol";
        const reset = await ok<{ passwordChanged: boolean; generatedPassword?: string }>(
          call("POST", "/rest/admin/users/carol/password", { password }),
        );
        assert.deepEqual(reset, { passwordChanged: true, username: "carol" });
        assert.ok(await verifyCredentials(service.store.db, "carol", password));
        const generated = await ok<{ generatedPassword: string }>(
          call("POST", "/rest/admin/users/carol/password", {}),
        );
        assert.equal(await verifyCredentials(service.store.db, "carol", password), undefined);
        assert.ok(await verifyCredentials(service.store.db, "carol", generated.generatedPassword));
        await ok(call("DELETE", "/rest/admin/users/carol"), 204);
        await refused(call("DELETE", "/rest/admin/users/carol"), 404, /No user named 'carol'/);
        await refused(call("PUT", "/rest/admin/users/carol/rights", { role: "viewer" }), 404, /carol/);
      });
    });

    describe("API keys", () => {
      it("creates a key shown once that works as X-API-KEY with its rights, lists it without secret, revokes it", async () => {
        const created = await ok<{ id: string; key: string; role: string; applications: string[] }>(
          call("POST", "/rest/admin/api-keys", { user: "ci-bot", role: "viewer", applications: ["portal"] }),
          201,
        );
        assert.match(created.key, /^imk_[0-9a-f]{16}_/);
        const withKey = () =>
          fetch(`${service.gatewayUrl}/rest/applications`, { headers: { "x-api-key": created.key } });
        const apps = await ok<{ name: string }[]>(withKey());
        assert.deepEqual(
          apps.map((a) => a.name),
          ["portal"],
        );
        await refused(
          fetch(`${service.gatewayUrl}/rest/admin/api-keys`, { headers: { "x-api-key": created.key } }),
          403,
          /Only administrators/,
        );
        const listed = await ok<{ id: string; revokedAt: string | null }[]>(
          call("GET", "/rest/admin/api-keys"),
        );
        assert.deepEqual(
          listed.map((k) => [k.id, k.revokedAt]),
          [[created.id, null]],
        );
        assert.ok(!JSON.stringify(listed).includes(created.key.slice(22)));

        const bad = await refused(
          call("POST", "/rest/admin/api-keys", { user: " ", role: "viewer" }),
          400,
          /user must be/,
        );
        assert.equal(bad.rule, "invalid-user");
        await refused(
          call("POST", "/rest/admin/api-keys", { user: "x", role: "owner" }),
          400,
          /role must be/,
        );

        await ok(call("DELETE", `/rest/admin/api-keys/${created.id}`), 204);
        await refused(withKey(), 401, /unknown or revoked/);
        const after = await ok<{ revokedAt: string | null }[]>(call("GET", "/rest/admin/api-keys"));
        assert.ok(after[0]?.revokedAt);
        await refused(call("DELETE", "/rest/admin/api-keys/0123456789abcdef"), 404, /No API key/);
      });
    });

    it("documents the operations in the OpenAPI document", async () => {
      const document = await ok<{ paths: Record<string, Record<string, unknown>> }>(
        fetch(`${service.gatewayUrl}/rest/openapi.json`),
      );
      for (const path of [
        "/rest/admin/cimd-policies",
        "/rest/admin/cimd-policies/{client}",
        "/rest/admin/cimd-policies/{client}/link",
        "/rest/admin/users",
        "/rest/admin/users/{username}/rights",
        "/rest/admin/api-keys",
        "/rest/admin/api-keys/{id}",
      ])
        assert.ok(document.paths[path], path);
      assert.deepEqual(Object.keys(document.paths["/rest/admin/cimd-policies"] ?? {}).sort(), [
        "get",
        "post",
      ]);
    });
  });
}
