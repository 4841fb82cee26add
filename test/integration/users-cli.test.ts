import assert from "node:assert/strict";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type UserRepresentation from "@keycloak/keycloak-admin-client/lib/defs/userRepresentation.js";
import type { KeycloakAdmin } from "../../src/idp/keycloak/admin.ts";
import { provisionKeycloak } from "../../src/idp/keycloak/provision.ts";
import { type CliResult, runCli, runCliWithStdin, spawnService } from "../support/cli.ts";
import {
  connectTestAdmin,
  keycloakEnv,
  type TestKeycloak,
  uniqueRealm,
  useKeycloak,
} from "../support/keycloak.ts";
import { freePort } from "../support/service.ts";
import { createTestStore, type TestStore } from "../support/stores.ts";

/**
 * `imaging users ...` with each identity provider: the embedded one (users in the platform store) and
 * Keycloak (users of the platform's realm). What reads the same with both is one suite run against each
 * (passwdRefusals, grantRefusals, removeThenUnknown); the rest checks each provider's own storage.
 */
interface ListedUser {
  id: string;
  username: string;
  roles: string[];
  applications: string[];
  createdAt: string;
  disabled: boolean;
}

/** How the suites below run `imaging users` against one identity provider. */
interface UsersTarget {
  /** `imaging users ...args` with this provider's settings, `input` on standard input. */
  users(args: string[], input?: string): Promise<CliResult>;
  /** A user the suite created earlier. */
  existing: string;
  /** What `users grant` says of an unknown user: the whole line, or a pattern in it. */
  unknownInGrant: string | RegExp;
  /** A user the suite created earlier, removed by a differently cased name, and how to see it is gone. */
  removal: { name: string; again: string; gone(): Promise<void> };
}

/** The refusals of `users passwd`, the same with either identity provider. */
function passwdRefusals(target: UsersTarget): void {
  it("refuses an unknown user (1) or a weak password (2)", async () => {
    const unknown = await target.users(["passwd", "nobody"]);
    assert.equal(unknown.code, 1);
    assert.equal(unknown.stderr.trim(), "imaging: No user named 'nobody' (see: imaging users list)");
    const weak = await target.users(["passwd", target.existing, "--password-stdin"], "12345\n");
    assert.equal(weak.code, 2);
    assert.match(weak.stderr, /at least 12 characters/);
  });
}

/** The refusals of `users grant`, the same with either identity provider. */
function grantRefusals(target: UsersTarget): void {
  it("refuses an unknown user (1) or a bad role (2)", async () => {
    const unknown = await target.users(["grant", "nobody", "--role", "viewer"]);
    assert.equal(unknown.code, 1);
    if (typeof target.unknownInGrant === "string") assert.equal(unknown.stderr.trim(), target.unknownInGrant);
    else assert.match(unknown.stderr, target.unknownInGrant);
    const role = await target.users(["grant", target.existing, "--role", "owner"]);
    assert.equal(role.code, 2);
    assert.match(role.stderr, /--role must be admin or viewer, got 'owner'/);
  });
}

/** `users remove`, the same with either identity provider. */
function removeThenUnknown(target: UsersTarget): void {
  it("removes a user, then says it is unknown", async () => {
    const { name, again: otherCase, gone } = target.removal;
    const removed = await target.users(["remove", name, "--json"]);
    assert.equal(removed.code, 0, removed.stderr);
    assert.deepEqual(JSON.parse(removed.stdout), { username: name, removed: true });
    await gone();
    const again = await target.users(["remove", otherCase]);
    assert.equal(again.code, 1);
    assert.equal(again.stderr.trim(), `imaging: No user named '${otherCase}' (see: imaging users list)`);
  });
}

describe("imaging users", () => {
  let store: TestStore;
  let dir: string[];
  before(async () => {
    store = await createTestStore("sqlite");
    dir = ["--data-dir", store.dataDir];
  });
  after(async () => {
    await store?.drop();
  });

  const list = async (): Promise<ListedUser[]> => {
    const result = await runCli(["users", "list", "--json", ...dir]);
    assert.equal(result.code, 0, result.stderr);
    return JSON.parse(result.stdout) as ListedUser[];
  };
  const target: UsersTarget = {
    users: (args, input) => runCliWithStdin(["users", ...args, ...dir], input),
    existing: "dave",
    unknownInGrant: /No user named 'nobody'/,
    removal: {
      name: "Carol@Example",
      again: "carol@example",
      gone: async () => assert.ok(!(await list()).some((u) => u.username === "carol@example")),
    },
  };
  const signIn = async (username: string, password: string) => {
    // The CLI has no sign-in command: check through the store API on the same files.
    const { openStore } = await import("../../src/store/database.ts");
    const { verifyCredentials } = await import("../../src/domain/users.ts");
    const handle = await openStore({ sqliteFile: store.sqliteFile });
    try {
      return await verifyCredentials(handle.db, username, password);
    } finally {
      await handle.close();
    }
  };

  it("has --help on every users command", async () => {
    for (const args of [
      ["users"],
      ["users", "add"],
      ["users", "list"],
      ["users", "remove"],
      ["users", "passwd"],
      ["users", "grant"],
    ]) {
      const result = await runCli([...args, "--help"]);
      assert.equal(result.code, 0, `${args.join(" ")} --help`);
      assert.match(result.stdout, /^Usage: imaging users/m);
      if (args.length > 1 && args[1] !== "list" && args[1] !== "remove") {
        assert.match(result.stdout, args[1] === "grant" ? /--role/ : /--password-stdin/);
      }
      if (args.length > 1) assert.match(result.stdout, /--data-dir.*\n.*--config.*\n.*--json/);
    }
  });

  describe("add", () => {
    it("reads the password from stdin with --password-stdin and prints no password", async () => {
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
          "--password-stdin",
          ...dir,
        ],
        "alice's long password\n",
      );
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout.trim(), "User Alice created (viewer: claims-portal, payments-service)");
      assert.ok(await signIn("alice", "alice's long password"));
    });

    it("generates a password when none is given and shows it once", async () => {
      const result = await runCli(["users", "add", "bob", "--role", "admin", ...dir]);
      assert.equal(result.code, 0, result.stderr);
      const password = /^ {2}([A-Za-z0-9_-]{24})$/m.exec(result.stdout)?.[1];
      assert.ok(password, result.stdout);
      assert.match(
        result.stdout,
        /^User bob created \(admin: all applications\)\nGenerated password: copy it now, it is not shown again:/,
      );
      assert.ok(await signIn("bob", password));
    });

    it("--json gives the user record, with generatedPassword only when generated", async () => {
      const generated = await runCli(["users", "add", "carol@example", "--role", "viewer", "--json", ...dir]);
      assert.equal(generated.code, 0, generated.stderr);
      const body = JSON.parse(generated.stdout) as ListedUser & { generatedPassword: string };
      assert.deepEqual(Object.keys(body).sort(), [
        "applications",
        "createdAt",
        "disabled",
        "generatedPassword",
        "id",
        "roles",
        "username",
      ]);
      assert.deepEqual([body.username, body.roles, body.applications], ["carol@example", ["viewer"], []]);
      assert.ok(await signIn("carol@example", body.generatedPassword));

      const given = await runCliWithStdin(
        ["users", "add", "dave", "--role", "viewer", "--password-stdin", "--json", ...dir],
        "dave's long password",
      );
      assert.equal(given.code, 0, given.stderr);
      assert.ok(!("generatedPassword" in JSON.parse(given.stdout)));
    });

    it("refuses a duplicate user in any case with exit code 1", async () => {
      const result = await runCli(["users", "add", "ALICE", "--role", "admin", ...dir]);
      assert.equal(result.code, 1);
      assert.equal(
        result.stderr.trim(),
        "imaging: A user named 'ALICE' already exists (as 'Alice': names are unique ignoring case)",
      );
    });

    it("refuses a weak password with exit code 2 and creates nothing", async () => {
      const result = await runCliWithStdin(
        ["users", "add", "erin", "--role", "viewer", "--password-stdin", ...dir],
        "short\n",
      );
      assert.equal(result.code, 2);
      assert.equal(
        result.stderr.trim(),
        "imaging: The password must be at least 12 characters long (it has 5)",
      );
      assert.ok(!(await list()).some((u) => u.username === "erin"));
    });

    it("refuses an empty or multi-line stdin password", async () => {
      const empty = await runCliWithStdin(
        ["users", "add", "erin", "--role", "viewer", "--password-stdin", ...dir],
        "",
      );
      assert.equal(empty.code, 2);
      assert.match(empty.stderr, /no password on standard input/);
      const lines = await runCliWithStdin(
        ["users", "add", "erin", "--role", "viewer", "--password-stdin", ...dir],
        "first line is long\nsecond line\n",
      );
      assert.equal(lines.code, 2);
      assert.match(lines.stderr, /must be a single line/);
    });

    it("refuses a bad role or user name with exit code 2", async () => {
      const role = await runCli(["users", "add", "erin", "--role", "root", ...dir]);
      assert.equal(role.code, 2);
      assert.equal(role.stderr.trim(), "imaging: --role must be admin or viewer, got 'root'");
      const name = await runCli(["users", "add", "erin smith", "--role", "viewer", ...dir]);
      assert.equal(name.code, 2);
      assert.match(name.stderr, /^imaging: Invalid user name 'erin smith': 1 to 64 characters/);
      const missing = await runCli(["users", "add", "erin", ...dir]);
      assert.notEqual(missing.code, 0);
      assert.match(missing.stderr, /--role/);
    });
  });

  describe("list", () => {
    it("lists users with their rights, never a hash or a password", async () => {
      const users = await list();
      assert.deepEqual(
        users.map((u) => [u.username, u.roles, u.applications, u.disabled]),
        [
          ["Alice", ["viewer"], ["claims-portal", "payments-service"], false],
          ["bob", ["admin"], [], false],
          ["carol@example", ["viewer"], [], false],
          ["dave", ["viewer"], [], false],
        ],
      );
      const text = await runCli(["users", "list", ...dir]);
      assert.equal(text.code, 0, text.stderr);
      const lines = text.stdout.trim().split("\n");
      assert.match(lines[0] as string, /^USER\s+ROLES\s+APPLICATIONS\s+CREATED\s+DISABLED$/);
      assert.match(lines[1] as string, /^Alice\s+viewer\s+claims-portal,payments-service\s+\d{4}-\S+\s+no$/);
      assert.match(lines[2] as string, /^bob\s+admin\s+\(all\)/);
      for (const output of [text.stdout, JSON.stringify(users)]) {
        assert.ok(!output.includes("scrypt"), "no hash in the listing");
        assert.ok(!output.includes("alice's long password"));
      }
    });
  });

  describe("passwd", () => {
    it("sets a password from stdin: the old one stops working", async () => {
      const result = await runCliWithStdin(
        ["users", "passwd", "alice", "--password-stdin", ...dir],
        "alice's newer password\r\n",
      );
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout.trim(), "Password of Alice changed");
      assert.equal(await signIn("Alice", "alice's long password"), undefined);
      assert.ok(await signIn("Alice", "alice's newer password"));
    });

    it("generates one when stdin is not used, shown once (--json: generatedPassword)", async () => {
      const result = await runCli(["users", "passwd", "dave", "--json", ...dir]);
      assert.equal(result.code, 0, result.stderr);
      const body = JSON.parse(result.stdout) as {
        username: string;
        passwordChanged: boolean;
        generatedPassword: string;
      };
      assert.deepEqual([body.username, body.passwordChanged], ["dave", true]);
      assert.ok(await signIn("dave", body.generatedPassword));
    });

    passwdRefusals(target);
  });

  describe("grant", () => {
    it("replaces the role and sets the applications", async () => {
      const result = await runCli([
        "users",
        "grant",
        "dave",
        "--role",
        "viewer",
        "--app",
        "storefront-web",
        ...dir,
      ]);
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout.trim(), "User dave is now viewer: storefront-web");
      const json = await runCli(["users", "grant", "ALICE", "--role", "admin", "--json", ...dir]);
      assert.equal(json.code, 0, json.stderr);
      const body = JSON.parse(json.stdout) as ListedUser;
      assert.deepEqual([body.username, body.roles, body.applications], ["Alice", ["admin"], []]);
    });

    grantRefusals(target);
  });

  describe("remove", () => {
    removeThenUnknown(target);
  });

  it("takes a user name starting with '-' after '--' in every command naming a user", async () => {
    // User names may start with '-' (letters, digits, '.', '_', '-', '@'): before `--` such a name is
    // an unknown option, and the error says what to type.
    const asOption = await runCli(["users", "add", "-dash", "--role", "viewer", ...dir]);
    assert.equal(asOption.code, 1);
    assert.match(asOption.stderr, /unknown option '-dash'/);
    assert.match(
      asOption.stderr,
      /goes after '--', which ends the options: imaging users add \[options\] -- -dash/,
    );
    assert.ok(!(await list()).some((u) => u.username === "-dash"));

    const added = await runCliWithStdin(
      ["users", "add", "--role", "viewer", "--password-stdin", ...dir, "--", "-dash"],
      "dash's long password\n",
    );
    assert.equal(added.code, 0, added.stderr);
    assert.ok(await signIn("-dash", "dash's long password"));
    const passwd = await runCliWithStdin(
      ["users", "passwd", "--password-stdin", ...dir, "--", "-DASH"],
      "dash's newer password\n",
    );
    assert.equal(passwd.code, 0, passwd.stderr);
    assert.ok(await signIn("-dash", "dash's newer password"));
    const granted = await runCli(["users", "grant", "--role", "admin", "--json", ...dir, "--", "-dash"]);
    assert.equal(granted.code, 0, granted.stderr);
    assert.deepEqual((JSON.parse(granted.stdout) as ListedUser).roles, ["admin"]);
    const removed = await runCli(["users", "remove", ...dir, "--", "-dash"]);
    assert.equal(removed.code, 0, removed.stderr);
    assert.ok(!(await list()).some((u) => u.username === "-dash"));
  });

  describe("on PostgreSQL (DATABASE_URL)", () => {
    let pgStore: TestStore;
    before(async () => {
      pgStore = await createTestStore("postgres");
    });
    after(async () => {
      await pgStore?.drop();
    });

    it("adds, lists and removes users in the PostgreSQL store", async () => {
      const env = { DATABASE_URL: pgStore.databaseUrl as string };
      const pgDir = ["--data-dir", pgStore.dataDir];
      const added = await runCliWithStdin(
        ["users", "add", "Pat", "--role", "viewer", "--password-stdin", ...pgDir],
        "pat's long password\n",
        env,
      );
      assert.equal(added.code, 0, added.stderr);
      const dup = await runCli(["users", "add", "pat", "--role", "viewer", ...pgDir], env);
      assert.equal(dup.code, 1);
      const listed = await runCli(["users", "list", "--json", ...pgDir], env);
      assert.deepEqual(
        (JSON.parse(listed.stdout) as ListedUser[]).map((u) => u.username),
        ["Pat"],
      );
      const removed = await runCli(["users", "remove", "PAT", ...pgDir], env);
      assert.equal(removed.code, 0, removed.stderr);
    });
  });

  describe("against a running service on the same store", () => {
    let service: Awaited<ReturnType<typeof spawnService>>;
    before(async () => {
      service = await spawnService([...dir, "--port", "0"], {
        PUBLIC_URL: "http://127.0.0.1:8090",
        REST_PORT: "0",
        MCP_ANALYSIS_PORT: "0",
        MCP_GATEKEEPER_PORT: "0",
        IMAGING_BIND_ADDRESS: "127.0.0.1",
      });
    });
    after(async () => {
      if (service.child.exitCode === null) {
        service.child.kill("SIGTERM");
        await once(service.child, "exit");
      }
    });

    it("adds, changes and removes users while the service runs", async () => {
      const added = await runCliWithStdin(
        ["users", "add", "frank", "--role", "viewer", "--password-stdin", ...dir],
        "frank's long password\n",
      );
      assert.equal(added.code, 0, added.stderr);
      const granted = await runCli(["users", "grant", "frank", "--role", "admin", ...dir]);
      assert.equal(granted.code, 0, granted.stderr);
      const passwd = await runCli(["users", "passwd", "frank", ...dir]);
      assert.equal(passwd.code, 0, passwd.stderr);
      assert.ok((await list()).some((u) => u.username === "frank" && u.roles[0] === "admin"));
      const removed = await runCli(["users", "remove", "frank", ...dir]);
      assert.equal(removed.code, 0, removed.stderr);
      assert.equal(service.child.exitCode, null, "the service still runs");
    });
  });
});

/**
 * `imaging users ...` with IDP=keycloak: users of the platform's Keycloak realm, their role being the
 * realm role `admin` or `viewer` they hold and their applications the user attribute `applications`.
 * Checked through Keycloak's own Admin API and by signing in (direct grant on a throwaway client).
 */

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
  const target: UsersTarget = {
    users: (args, input) => runCliWithStdin(["users", ...args], input, env),
    existing: "alice",
    unknownInGrant: "imaging: No user named 'nobody' (see: imaging users list)",
    removal: {
      name: "Carl",
      again: "carl",
      gone: async () => assert.equal(await keycloakUser("carl"), undefined),
    },
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

    grantRefusals(target);
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

    passwdRefusals(target);

    it("refuses a password the realm's policy refuses (2)", async () => {
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
    removeThenUnknown(target);
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
