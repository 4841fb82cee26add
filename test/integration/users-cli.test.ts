import assert from "node:assert/strict";
import { once } from "node:events";
import { after, before, describe, it } from "node:test";
import { runCli, runCliWithStdin, spawnService } from "../support/cli.ts";
import { createTestStore, type TestStore } from "../support/stores.ts";

interface ListedUser {
  id: string;
  username: string;
  roles: string[];
  applications: string[];
  createdAt: string;
  disabled: boolean;
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

    it("refuses an unknown user (1) or a weak password (2)", async () => {
      const unknown = await runCli(["users", "passwd", "nobody", ...dir]);
      assert.equal(unknown.code, 1);
      assert.equal(unknown.stderr.trim(), "imaging: No user named 'nobody' (see: imaging users list)");
      const weak = await runCliWithStdin(["users", "passwd", "dave", "--password-stdin", ...dir], "12345\n");
      assert.equal(weak.code, 2);
      assert.match(weak.stderr, /at least 12 characters/);
    });
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

    it("refuses an unknown user (1) or a bad role (2)", async () => {
      const unknown = await runCli(["users", "grant", "nobody", "--role", "viewer", ...dir]);
      assert.equal(unknown.code, 1);
      assert.match(unknown.stderr, /No user named 'nobody'/);
      const role = await runCli(["users", "grant", "dave", "--role", "owner", ...dir]);
      assert.equal(role.code, 2);
      assert.match(role.stderr, /--role must be admin or viewer, got 'owner'/);
    });
  });

  describe("remove", () => {
    it("removes a user, then says it is unknown", async () => {
      const removed = await runCli(["users", "remove", "Carol@Example", "--json", ...dir]);
      assert.equal(removed.code, 0, removed.stderr);
      assert.deepEqual(JSON.parse(removed.stdout), { username: "Carol@Example", removed: true });
      assert.ok(!(await list()).some((u) => u.username === "carol@example"));
      const again = await runCli(["users", "remove", "carol@example", ...dir]);
      assert.equal(again.code, 1);
      assert.equal(again.stderr.trim(), "imaging: No user named 'carol@example' (see: imaging users list)");
    });
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
