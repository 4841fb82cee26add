import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type UserRepresentation from "@keycloak/keycloak-admin-client/lib/defs/userRepresentation.js";
import type { KeycloakAdmin } from "../../src/idp/keycloak/admin.ts";
import { provisionKeycloak } from "../../src/idp/keycloak/provision.ts";
import { runCli, runCliWithStdin } from "../support/cli.ts";
import {
  connectTestAdmin,
  keycloakEnv,
  type TestKeycloak,
  uniqueRealm,
  useKeycloak,
} from "../support/keycloak.ts";
import { freePort } from "../support/service.ts";

/**
 * `imaging users ...` with IDP=keycloak: users of the platform's Keycloak realm, their role being the
 * realm role `admin` or `viewer` they hold and their applications the user attribute `applications`.
 * Checked through Keycloak's own Admin API and by signing in (direct grant on a throwaway client).
 */

interface ListedUser {
  id: string;
  username: string;
  roles: string[];
  applications: string[];
  createdAt: string;
  disabled: boolean;
}

/** A public client allowed the password grant: signing in with it proves a password works. */
const SIGN_IN_CLIENT = "password-check";

describe("imaging users with IDP=keycloak", () => {
  let keycloak: TestKeycloak;
  let admin: KeycloakAdmin;
  let realm: string;
  let dataDir: string;
  let env: Record<string, string>;

  const users = (...args: string[]) => runCli(["users", ...args], env);
  const ok = async (...args: string[]) => {
    const result = await users(...args);
    assert.equal(result.code, 0, `${args.join(" ")}: ${result.stderr}`);
    return result;
  };
  const list = async () => JSON.parse((await ok("list", "--json")).stdout) as ListedUser[];
  const keycloakUser = async (username: string): Promise<UserRepresentation | undefined> =>
    (await admin.users.find({ realm, username, exact: true, briefRepresentation: false }))[0];
  const realmRolesOf = async (username: string) => {
    const user = await keycloakUser(username);
    assert.ok(user?.id, `${username} exists in Keycloak`);
    const mapped = await admin.users.listRealmRoleMappings({ realm, id: user.id });
    return mapped
      .map((r) => r.name)
      .filter((n) => n === "admin" || n === "viewer")
      .sort();
  };
  /** Keycloak's answer to a password grant: the access token's claims, or its error. */
  const signIn = async (username: string, password: string) => {
    const response = await fetch(`${keycloak.url}/realms/${realm}/protocol/openid-connect/token`, {
      method: "POST",
      body: new URLSearchParams({ grant_type: "password", client_id: SIGN_IN_CLIENT, username, password }),
    });
    const body = (await response.json()) as {
      access_token?: string;
      error?: string;
      error_description?: string;
    };
    const claims = body.access_token
      ? (JSON.parse(Buffer.from(body.access_token.split(".")[1] ?? "", "base64url").toString()) as {
          preferred_username: string;
          realm_access?: { roles: string[] };
        })
      : undefined;
    return { status: response.status, claims, error: body.error, description: body.error_description };
  };

  before(async () => {
    keycloak = await useKeycloak();
    realm = uniqueRealm("users-cli");
    admin = await connectTestAdmin(keycloak, realm);
    // The platform's provisioning: realm, roles admin and viewer, the `applications` user attribute.
    await provisionKeycloak(admin, {
      realm,
      baseUrl: "http://127.0.0.1:8090",
      exchangeClientId: "mcp-token-exchange",
      keycloakUrl: keycloak.url,
    });
    await admin.clients.create({
      realm,
      clientId: SIGN_IN_CLIENT,
      publicClient: true,
      directAccessGrantsEnabled: true,
      standardFlowEnabled: false,
    });
    dataDir = mkdtempSync(join(tmpdir(), "imaging-kc-users-"));
    env = keycloakEnv(keycloak, realm, { PUBLIC_URL: "http://127.0.0.1:8090", IMAGING_DATA_DIR: dataDir });
  });
  after(async () => {
    await admin?.realms.del({ realm }).catch(() => undefined);
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  describe("add", () => {
    it("creates the Keycloak user with its details, role, applications and the password from stdin", async () => {
      const result = await runCliWithStdin(
        [
          "users",
          "add",
          "Alice",
          "--role",
          "viewer",
          "--app",
          "payments-service",
          "--app",
          "claims-portal",
          "--email",
          "alice@example.com",
          "--first-name",
          "Alice",
          "--last-name",
          "Liddell",
          "--password-stdin",
        ],
        "alice's long password\n",
        env,
      );
      assert.equal(result.code, 0, result.stderr);
      // Keycloak keeps user names in lower case.
      assert.equal(result.stdout.trim(), "User alice created (viewer: claims-portal, payments-service)");

      const user = await keycloakUser("alice");
      assert.equal(user?.enabled, true);
      assert.deepEqual(
        [user?.email, user?.firstName, user?.lastName],
        ["alice@example.com", "Alice", "Liddell"],
      );
      assert.deepEqual(user?.attributes?.applications, ["claims-portal", "payments-service"]);
      assert.deepEqual(user?.requiredActions ?? [], []);
      assert.deepEqual(await realmRolesOf("alice"), ["viewer"]);
      const credentials = await admin.users.getCredentials({ realm, id: user?.id as string });
      assert.deepEqual(
        credentials.map((c) => c.type),
        ["password"],
      );
    });

    it("the password works: Keycloak issues a token with the user's realm role", async () => {
      const granted = await signIn("alice", "alice's long password");
      assert.equal(granted.status, 200, `${granted.error}: ${granted.description}`);
      assert.equal(granted.claims?.preferred_username, "alice", JSON.stringify(granted.claims));
      assert.ok(granted.claims?.realm_access?.roles.includes("viewer"));
      assert.ok(!granted.claims?.realm_access?.roles.includes("admin"));
      const refused = await signIn("alice", "not alice's password");
      assert.equal(refused.error, "invalid_grant");
      assert.equal(refused.description, "Invalid user credentials");
    });

    it("generates a password shown once; without e-mail and names Keycloak wants them at sign-in", async () => {
      const result = await ok("add", "bob", "--role", "admin", "--json");
      const body = JSON.parse(result.stdout) as ListedUser & { generatedPassword: string };
      assert.deepEqual(Object.keys(body).sort(), [
        "applications",
        "createdAt",
        "disabled",
        "generatedPassword",
        "id",
        "roles",
        "username",
      ]);
      assert.deepEqual(
        [body.username, body.roles, body.applications, body.disabled],
        ["bob", ["admin"], [], false],
      );
      assert.equal(body.id, (await keycloakUser("bob"))?.id);
      assert.deepEqual(await realmRolesOf("bob"), ["admin"]);
      // The password is accepted (a wrong one reads "Invalid user credentials"), the profile is not complete.
      const incomplete = await signIn("bob", body.generatedPassword);
      assert.equal(incomplete.error, "invalid_grant");
      assert.equal(incomplete.description, "Account is not fully set up");
      assert.equal((await signIn("bob", "a wrong password for bob")).description, "Invalid user credentials");

      const text = await ok("add", "carl", "--role", "viewer");
      assert.match(
        text.stdout,
        /^User carl created \(viewer: no application\)\nGenerated password: copy it now, it is not shown again:\n\n {2}[A-Za-z0-9_-]{24}\n/,
      );
      assert.match(
        text.stdout,
        /^Note: Keycloak asks carl for e-mail, first name and last name at the first sign-in \(give --email, --first-name, --last-name to avoid it\)$/m,
      );
    });

    it("refuses a duplicate name (any case) or e-mail with exit code 1, creating nothing", async () => {
      const name = await users("add", "ALICE", "--role", "admin");
      assert.equal(name.code, 1);
      assert.equal(
        name.stderr.trim(),
        "imaging: A user named 'ALICE' already exists (as 'alice': names are unique ignoring case; Keycloak keeps them in lower case)",
      );
      const email = await users("add", "alice2", "--role", "viewer", "--email", "alice@example.com");
      assert.equal(email.code, 1);
      assert.equal(
        email.stderr.trim(),
        `imaging: A user with email 'alice@example.com' already exists in Keycloak realm ${realm}`,
      );
      assert.equal(await keycloakUser("alice2"), undefined);
    });

    it("refuses bad input with exit code 2 and one readable line", async () => {
      const cases: [string[], RegExp][] = [
        [["add", "erin", "--role", "root"], /^imaging: --role must be admin or viewer, got 'root'$/],
        [["add", "erin smith", "--role", "viewer"], /^imaging: Invalid user name 'erin smith'/],
        [
          ["add", "ed", "--role", "viewer"],
          new RegExp(
            `^imaging: Keycloak realm ${realm} refused the user: username must be 3 to 255 characters long$`,
          ),
        ],
        [
          ["add", "erin", "--role", "viewer", "--email", "not-an-address"],
          new RegExp(
            `^imaging: Keycloak realm ${realm} refused the user: email is not a valid e-mail address$`,
          ),
        ],
        [
          ["add", "erin", "--role", "viewer", "--first-name", " "],
          /^imaging: --first-name must not be empty$/,
        ],
      ];
      for (const [args, message] of cases) {
        const result = await users(...args);
        assert.equal(result.code, 2, `${args.join(" ")}: ${result.stderr}`);
        assert.match(result.stderr.trim(), message);
      }
      const weak = await runCliWithStdin(
        ["users", "add", "erin", "--role", "viewer", "--password-stdin"],
        "short\n",
        env,
      );
      assert.equal(weak.code, 2);
      assert.equal(
        weak.stderr.trim(),
        "imaging: The password must be at least 12 characters long (it has 5)",
      );
      for (const username of ["erin", "ed"]) assert.equal(await keycloakUser(username), undefined);
    });

    it("--email, --first-name and --last-name are refused without IDP=keycloak", async () => {
      const result = await runCli(["users", "add", "frank", "--role", "viewer", "--email", "f@example.com"], {
        ...env,
        IDP: "embedded",
      });
      assert.equal(result.code, 2);
      assert.equal(
        result.stderr.trim(),
        "imaging: --email: only with IDP=keycloak (the embedded identity provider keeps no e-mail or name)",
      );
    });
  });

  describe("list", () => {
    it("lists the realm's users with their role and applications, made by imaging or by hand", async () => {
      // An administrator creates one in Keycloak's console, with the realm role admin.
      const { id } = await admin.users.create({
        realm,
        username: "dora",
        enabled: false,
        email: "dora@example.com",
      });
      const role = await admin.roles.findOneByName({ realm, name: "admin" });
      await admin.users.addRealmRoleMappings({
        realm,
        id,
        roles: [{ id: role?.id as string, name: "admin" }],
      });

      const listed = await list();
      assert.deepEqual(
        listed.map((u) => [u.username, u.roles, u.applications, u.disabled]),
        [
          ["alice", ["viewer"], ["claims-portal", "payments-service"], false],
          ["bob", ["admin"], [], false],
          ["carl", ["viewer"], [], false],
          ["dora", ["admin"], [], true],
        ],
      );
      assert.ok(listed.every((u) => /^\d{4}-\d\d-\d\dT/.test(u.createdAt)));
      const text = await ok("list");
      const lines = text.stdout.trim().split("\n");
      assert.match(lines[0] as string, /^USER\s+ROLES\s+APPLICATIONS\s+CREATED\s+DISABLED$/);
      assert.match(lines[1] as string, /^alice\s+viewer\s+claims-portal,payments-service\s+\d{4}-\S+\s+no$/);
      assert.match(lines[2] as string, /^bob\s+admin\s+\(all\)/);
      assert.match(lines[4] as string, /^dora\s+admin\s+\(all\)\s+\S+\s+yes$/);
      assert.ok(!text.stdout.includes("alice's long password"));
    });
  });

  describe("grant", () => {
    it("replaces the realm role and the applications attribute, keeping the user's details", async () => {
      const toAdmin = await ok("grant", "ALICE", "--role", "admin");
      assert.equal(toAdmin.stdout.trim(), "User alice is now admin: all applications");
      assert.deepEqual(await realmRolesOf("alice"), ["admin"]);
      assert.deepEqual((await keycloakUser("alice"))?.attributes?.applications ?? [], []);

      const back = await ok("grant", "alice", "--role", "viewer", "--app", "storefront-web", "--json");
      const body = JSON.parse(back.stdout) as ListedUser;
      assert.deepEqual(
        [body.username, body.roles, body.applications],
        ["alice", ["viewer"], ["storefront-web"]],
      );
      const user = await keycloakUser("alice");
      assert.deepEqual(user?.attributes?.applications, ["storefront-web"]);
      assert.deepEqual(
        [user?.email, user?.firstName, user?.lastName],
        ["alice@example.com", "Alice", "Liddell"],
      );
      assert.deepEqual(await realmRolesOf("alice"), ["viewer"]);
      const token = await signIn("alice", "alice's long password");
      assert.ok(token.claims?.realm_access?.roles.includes("viewer"));
      assert.ok(!token.claims?.realm_access?.roles.includes("admin"));
    });

    it("refuses an unknown user (1) or a bad role (2)", async () => {
      const unknown = await users("grant", "nobody", "--role", "viewer");
      assert.equal(unknown.code, 1);
      assert.equal(unknown.stderr.trim(), "imaging: No user named 'nobody' (see: imaging users list)");
      const role = await users("grant", "alice", "--role", "owner");
      assert.equal(role.code, 2);
      assert.match(role.stderr, /--role must be admin or viewer, got 'owner'/);
    });
  });

  describe("passwd", () => {
    it("sets the password in Keycloak: the old one stops working, the new one signs in", async () => {
      const result = await runCliWithStdin(
        ["users", "passwd", "Alice", "--password-stdin"],
        "alice's newer password\n",
        env,
      );
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout.trim(), "Password of alice changed");
      assert.equal((await signIn("alice", "alice's long password")).description, "Invalid user credentials");
      assert.equal((await signIn("alice", "alice's newer password")).status, 200);
      const generated = JSON.parse((await ok("passwd", "alice", "--json")).stdout) as {
        generatedPassword: string;
        passwordChanged: boolean;
      };
      assert.equal(generated.passwordChanged, true);
      assert.equal((await signIn("alice", generated.generatedPassword)).status, 200);
    });

    it("refuses an unknown user (1), a weak password (2) or one the realm's policy refuses (2)", async () => {
      const unknown = await users("passwd", "nobody");
      assert.equal(unknown.code, 1);
      assert.equal(unknown.stderr.trim(), "imaging: No user named 'nobody' (see: imaging users list)");
      const weak = await runCliWithStdin(["users", "passwd", "alice", "--password-stdin"], "12345\n", env);
      assert.equal(weak.code, 2);
      assert.match(weak.stderr, /at least 12 characters/);

      await admin.realms.update({ realm }, { passwordPolicy: "length(40)" });
      try {
        const refused = await runCliWithStdin(
          ["users", "passwd", "alice", "--password-stdin"],
          "long enough for imaging\n",
          env,
        );
        assert.equal(refused.code, 2);
        assert.equal(
          refused.stderr.trim(),
          `imaging: Keycloak realm ${realm} refused the password: Invalid password: minimum length 40.`,
        );
      } finally {
        await admin.realms.update({ realm }, { passwordPolicy: "" });
      }
    });
  });

  describe("remove", () => {
    it("deletes the Keycloak user, then says it is unknown", async () => {
      const removed = await ok("remove", "Carl", "--json");
      assert.deepEqual(JSON.parse(removed.stdout), { username: "Carl", removed: true });
      assert.equal(await keycloakUser("carl"), undefined);
      const again = await users("remove", "carl");
      assert.equal(again.code, 1);
      assert.equal(again.stderr.trim(), "imaging: No user named 'carl' (see: imaging users list)");
    });
  });

  describe("when Keycloak is not as expected", () => {
    it("says when Keycloak cannot be reached or refuses the administrator (exit code 1, no stack)", async () => {
      const cases: [Record<string, string>, RegExp][] = [
        [
          { KEYCLOAK_URL: `http://127.0.0.1:${await freePort()}/auth` },
          /^imaging: Cannot reach Keycloak at http:\/\/127\.0\.0\.1:\d+\/auth \(KEYCLOAK_URL\): .+$/,
        ],
        [
          { KEYCLOAK_ADMIN_PASSWORD: "not-the-password" },
          /^imaging: Keycloak refused the administrator kc-admin \(KEYCLOAK_ADMIN_USERNAME\/PASSWORD\) in realm master: check the credentials and KEYCLOAK_ADMIN_REALM$/,
        ],
        [{ KEYCLOAK_REALM: "no-such-realm" }, /^imaging: Keycloak at \S+ has no realm no-such-realm/],
      ];
      for (const [change, message] of cases)
        for (const args of [["list"], ["add", "gina", "--role", "viewer"], ["remove", "alice"]]) {
          const result = await runCli(["users", ...args], { ...env, ...change });
          assert.equal(result.code, 1, `${args.join(" ")}: ${result.stderr}`);
          assert.match(result.stderr.trim(), message);
          assert.equal(result.stderr.trim().split("\n").length, 1, result.stderr);
        }
      assert.ok(await keycloakUser("alice"), "nothing was removed");
    });

    it("refuses to lose applications in a realm whose user profile lacks the attribute, leaving no user", async () => {
      const bare = uniqueRealm("users-bare");
      await admin.realms.create({ realm: bare, enabled: true });
      try {
        for (const name of ["admin", "viewer"]) await admin.roles.create({ realm: bare, name });
        const result = await runCli(
          ["users", "add", "hank", "--role", "viewer", "--app", "payments-service"],
          {
            ...env,
            KEYCLOAK_REALM: bare,
          },
        );
        assert.equal(result.code, 1);
        assert.match(
          result.stderr.trim(),
          new RegExp(
            `^imaging: Keycloak realm ${bare} did not keep the user attribute 'applications': declare it in the realm's user profile`,
          ),
        );
        assert.deepEqual(await admin.users.find({ realm: bare, username: "hank", exact: true }), []);
      } finally {
        await admin.realms.del({ realm: bare });
      }
    });

    it("says so when the realm lacks the platform's roles", async () => {
      const bare = uniqueRealm("users-noroles");
      await admin.realms.create({ realm: bare, enabled: true });
      try {
        const result = await runCli(["users", "add", "hank", "--role", "viewer"], {
          ...env,
          KEYCLOAK_REALM: bare,
        });
        assert.equal(result.code, 1);
        assert.match(
          result.stderr.trim(),
          new RegExp(`^imaging: Keycloak realm ${bare} has no realm role 'viewer'`),
        );
        assert.deepEqual(await admin.users.find({ realm: bare, username: "hank", exact: true }), []);
      } finally {
        await admin.realms.del({ realm: bare });
      }
    });
  });
});
