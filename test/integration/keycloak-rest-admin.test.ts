import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createApiKey } from "../../src/domain/api-keys.ts";
import {
  type KeycloakService,
  seedKeycloakUsers,
  startKeycloakService,
} from "../support/keycloak-service.ts";

/**
 * The REST administration endpoints with IDP=keycloak: CIMD client policies are Keycloak's client
 * policies (read back through the Admin API), users are a read-only list naming Keycloak's console.
 */
describe("REST administration endpoints with IDP=keycloak", () => {
  let kc: KeycloakService;
  let adminKey: string;
  let viewerKey: string;

  const call = (method: string, path: string, body?: unknown, key = adminKey) =>
    fetch(`${kc.base}${path}`, {
      method,
      headers: {
        "x-api-key": key,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const ok = async <T>(response: Promise<Response>, status = 200): Promise<T> => {
    const r = await response;
    assert.equal(r.status, status, await r.clone().text());
    return (status === 204 ? undefined : await r.json()) as T;
  };
  const refused = async (response: Promise<Response>, status: number, detail: RegExp) => {
    const r = await response;
    assert.equal(r.status, status, await r.clone().text());
    assert.match(r.headers.get("content-type") ?? "", /^application\/problem\+json/);
    const body = (await r.json()) as { detail: string; rule?: string };
    assert.match(body.detail, detail);
    return body;
  };

  before(async () => {
    kc = await startKeycloakService();
    await seedKeycloakUsers(kc.admin);
    adminKey = (await createApiKey(kc.service.store.db, { user: "ops", role: "admin", applications: [] }))
      .key;
    viewerKey = (await createApiKey(kc.service.store.db, { user: "dev", role: "viewer", applications: [] }))
      .key;
  });
  after(async () => {
    await kc?.stop();
  });

  it("creates a CIMD policy from a preset in the realm's client policies, links, unlinks and removes it", async () => {
    const created = await ok<{ client: string; linked: boolean; problems: string[] }>(
      call("POST", "/rest/admin/cimd-policies", { preset: "vscode" }),
      201,
    );
    assert.equal(created.client, "vscode");
    assert.equal(created.linked, true);
    const policies =
      (await kc.admin.clientPolicies.listPolicies({ includeGlobalPolicies: false })).policies ?? [];
    const policy = policies.find((p) => p.name === "cimd-policy-vscode");
    assert.deepEqual(policy?.profiles, ["cimd-profile-vscode"]);
    const profiles =
      (await kc.admin.clientPolicies.listProfiles({ includeGlobalProfiles: false })).profiles ?? [];
    assert.ok(profiles.some((p) => p.name === "cimd-profile-vscode"));

    const unlinked = await ok<{ linked: boolean; problems: string[] }>(
      call("POST", "/rest/admin/cimd-policies/vscode/unlink"),
    );
    assert.equal(unlinked.linked, false);
    assert.ok(unlinked.problems.some((p) => /CIMD is ignored/.test(p)));
    const afterUnlink = (await kc.admin.clientPolicies.listPolicies({ includeGlobalPolicies: false }))
      .policies;
    assert.deepEqual(afterUnlink?.find((p) => p.name === "cimd-policy-vscode")?.profiles, []);

    const bad = await refused(
      call("PATCH", "/rest/admin/cimd-policies/vscode", { policyDomains: ["vscode.dev:443"] }),
      400,
      /must not carry a port/,
    );
    assert.equal(bad.rule, "trusted-domain");

    const listed = await ok<{ client: string }[]>(call("GET", "/rest/admin/cimd-policies"));
    assert.deepEqual(
      listed.map((c) => c.client),
      ["vscode"],
    );
    await ok(call("DELETE", "/rest/admin/cimd-policies/vscode"), 204);
    const gone =
      (await kc.admin.clientPolicies.listPolicies({ includeGlobalPolicies: false })).policies ?? [];
    assert.ok(!gone.some((p) => p.name === "cimd-policy-vscode"));
  });

  it("lists the realm's users read-only, with the Keycloak console URL; changes are refused", async () => {
    const answer = await ok<{
      idp: string;
      readOnly: boolean;
      usersConsoleUrl: string;
      users: { username: string; roles: string[] }[];
    }>(call("GET", "/rest/admin/users"));
    assert.equal(answer.idp, "keycloak");
    assert.equal(answer.readOnly, true);
    assert.equal(answer.usersConsoleUrl, `${kc.keycloak.url}/admin/master/console/#/${kc.realm}/users`);
    const seeded = await kc.admin.users.find({ max: 100 });
    assert.deepEqual(answer.users.map((u) => u.username).sort(), seeded.map((u) => u.username ?? "").sort());
    assert.ok(answer.users.length > 0);
    await refused(
      call("POST", "/rest/admin/users", { username: "newbie", role: "viewer" }),
      409,
      /managed in Keycloak's admin console/,
    );
    assert.deepEqual(await kc.admin.users.find({ username: "newbie", exact: true }), []);
  });

  it("refuses a viewer key (403)", async () => {
    await refused(call("GET", "/rest/admin/users", undefined, viewerKey), 403, /Only administrators/);
    await refused(call("GET", "/rest/admin/cimd-policies", undefined, viewerKey), 403, /Only administrators/);
  });
});
