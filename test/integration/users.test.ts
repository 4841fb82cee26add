import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Kysely } from "kysely";
import { hashParameters, needsRehash } from "../../src/domain/passwords.ts";
import {
  createUser,
  ensureAdminUser,
  grantUser,
  removeUser,
  setPassword,
  setUserDisabled,
  UserError,
  verifyCredentials,
} from "../../src/domain/users.ts";
import { openStore, type StoreHandle } from "../../src/store/database.ts";
import type { Database } from "../../src/store/schema.ts";
import { findUserById, findUserRow, listUsers, toRecord, type UserRecord } from "../../src/store/users.ts";
import { createTestStore, STORE_KINDS, type TestStore } from "../support/stores.ts";

const PASSWORD = "a long enough passphrase";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The user of that name ignoring case, by the lookup sign-in and `imaging users` use (findUserRow). */
async function findUserByName(db: Kysely<Database>, username: string): Promise<UserRecord | undefined> {
  const row = await findUserRow(db, username);
  return row && toRecord(row);
}

/** Reads the stored row directly: what the API never returns. */
async function storedHash(db: Kysely<Database>, id: string): Promise<string> {
  const row = await db
    .withTables<{ users: { id: string; password_hash: string } }>()
    .selectFrom("users")
    .select("password_hash")
    .where("id", "=", id)
    .executeTakeFirstOrThrow();
  return row.password_hash;
}

const rejectsWith = (code: string, pattern: RegExp) => (error: unknown) => {
  assert.ok(error instanceof UserError, String(error));
  assert.equal(error.code, code);
  assert.match(error.message, pattern);
  return true;
};

for (const kind of STORE_KINDS) {
  describe(`users of the embedded identity provider (${kind})`, () => {
    let test: TestStore;
    let store: StoreHandle;
    let db: Kysely<Database>;
    before(async () => {
      test = await createTestStore(kind);
      store = await openStore({ databaseUrl: test.databaseUrl, sqliteFile: test.sqliteFile });
      db = store.db;
    });
    after(async () => {
      await store?.close();
      await test?.drop();
    });

    describe("ensureAdminUser", () => {
      it("creates admin with a generated password on the first start, returned once", async () => {
        const first = await ensureAdminUser(db, {});
        assert.equal(first.created, true);
        assert.match(first.generatedPassword ?? "", /^[A-Za-z0-9_-]{24}$/);
        const admin = await verifyCredentials(db, "admin", first.generatedPassword as string);
        assert.deepEqual(admin && { username: admin.username, roles: admin.roles }, {
          username: "admin",
          roles: ["admin"],
        });
        const again = await ensureAdminUser(db, { password: "another admin password" });
        assert.deepEqual(again, { created: false });
        assert.ok(await verifyCredentials(db, "admin", first.generatedPassword as string), "unchanged");
        assert.equal(await removeUser(db, "admin"), true);
      });
    });

    describe("createUser and lookups", () => {
      let alice: UserRecord;
      it("creates a user and returns its record, never its hash", async () => {
        alice = await createUser(db, {
          username: "Alice.Smith@example",
          password: PASSWORD,
          role: "viewer",
          applications: ["storefront-web", "payments-service", "storefront-web"],
        });
        assert.match(alice.id, UUID);
        assert.deepEqual(
          { ...alice, id: "-", createdAt: "-" },
          {
            id: "-",
            username: "Alice.Smith@example",
            roles: ["viewer"],
            applications: ["payments-service", "storefront-web"],
            createdAt: "-",
            disabled: false,
          },
        );
        assert.ok(!Number.isNaN(Date.parse(alice.createdAt)));
        assert.ok(!JSON.stringify(alice).includes("scrypt"));
        const hash = await storedHash(db, alice.id);
        assert.match(hash, /^scrypt\$32768\$8\$1\$/);
        assert.ok(!hash.includes(PASSWORD));
      });

      it("finds a user by name ignoring case, and by id", async () => {
        assert.deepEqual(await findUserByName(db, "alice.smith@EXAMPLE"), alice);
        assert.deepEqual(await findUserByName(db, "Alice.Smith@example"), alice);
        assert.deepEqual(await findUserById(db, alice.id), alice);
        assert.equal(await findUserByName(db, "bob"), undefined);
        assert.equal(await findUserByName(db, "not a valid name"), undefined);
        assert.equal(await findUserById(db, "00000000-0000-0000-0000-000000000000"), undefined);
      });

      it("refuses a name taken in another case, keeping the stored spelling", async () => {
        await assert.rejects(
          createUser(db, { username: "ALICE.SMITH@example", password: PASSWORD, role: "admin" }),
          rejectsWith("duplicate", /'ALICE\.SMITH@example' already exists \(as 'Alice\.Smith@example'/),
        );
        await assert.rejects(
          createUser(db, { username: "Alice.Smith@example", password: PASSWORD, role: "admin" }),
          rejectsWith("duplicate", /^A user named 'Alice\.Smith@example' already exists$/),
        );
      });

      it("keeps one user when two creations of the same name race", async () => {
        const results = await Promise.allSettled([
          createUser(db, { username: "racer", password: PASSWORD, role: "viewer" }),
          createUser(db, { username: "RACER", password: PASSWORD, role: "viewer" }),
        ]);
        assert.deepEqual(results.map((r) => r.status).sort(), ["fulfilled", "rejected"]);
        const rejected = results.find((r) => r.status === "rejected") as PromiseRejectedResult;
        assert.ok(rejected.reason instanceof UserError && rejected.reason.code === "duplicate");
        assert.equal(await removeUser(db, "racer"), true);
      });

      it("refuses invalid names, roles, weak passwords and empty application names", async () => {
        for (const username of ["", "with space", "x".repeat(65), "slash/name", "émile"]) {
          await assert.rejects(
            createUser(db, { username, password: PASSWORD, role: "viewer" }),
            rejectsWith("invalid-username", /1 to 64 characters among letters, digits/),
          );
        }
        await createUser(db, { username: `a-b_c.d@${"e".repeat(56)}`, password: PASSWORD, role: "viewer" });
        await assert.rejects(
          createUser(db, { username: "bob", password: PASSWORD, role: "root" as "admin" }),
          rejectsWith("invalid-role", /must be admin or viewer, got 'root'/),
        );
        await assert.rejects(
          createUser(db, { username: "bob", password: "short", role: "viewer" }),
          rejectsWith("weak-password", /at least 12 characters long \(it has 5\)/),
        );
        await assert.rejects(
          createUser(db, { username: "bob", password: PASSWORD, role: "viewer", applications: [" "] }),
          rejectsWith("invalid-application", /must not be empty/),
        );
        assert.equal(await findUserByName(db, "bob"), undefined);
      });

      it("lists users by name ignoring case, with no password hash", async () => {
        await createUser(db, { username: "bob", password: PASSWORD, role: "admin" });
        await createUser(db, { username: "Carol", password: PASSWORD, role: "viewer" });
        const list = await listUsers(db);
        assert.deepEqual(
          list.map((u) => u.username),
          [`a-b_c.d@${"e".repeat(56)}`, "Alice.Smith@example", "bob", "Carol"],
        );
        assert.ok(
          list.every(
            (u) => Object.keys(u).sort().join() === "applications,createdAt,disabled,id,roles,username",
          ),
        );
      });
    });

    describe("verifyCredentials", () => {
      it("returns the user for the right password, the name in any case", async () => {
        const user = await verifyCredentials(db, "ALICE.smith@example", PASSWORD);
        assert.equal(user?.username, "Alice.Smith@example");
      });

      it("returns undefined for a wrong password, an unknown or invalid user", async () => {
        assert.equal(await verifyCredentials(db, "Alice.Smith@example", `${PASSWORD}!`), undefined);
        assert.equal(await verifyCredentials(db, "nobody", PASSWORD), undefined);
        assert.equal(await verifyCredentials(db, "in valid", PASSWORD), undefined);
        assert.equal(await verifyCredentials(db, "Alice.Smith@example", ""), undefined);
      });

      it("refuses a disabled user even with the right password, until enabled again", async () => {
        const disabled = await setUserDisabled(db, "carol", true);
        assert.equal(disabled.disabled, true);
        assert.equal((await findUserByName(db, "Carol"))?.disabled, true);
        assert.equal(await verifyCredentials(db, "Carol", PASSWORD), undefined);
        await setUserDisabled(db, "Carol", false);
        assert.equal((await verifyCredentials(db, "Carol", PASSWORD))?.disabled, false);
      });

      it("replaces a hash made with older parameters at the next successful sign-in", async () => {
        const { scryptSync, randomBytes } = await import("node:crypto");
        const bob = (await findUserByName(db, "bob")) as UserRecord;
        const salt = randomBytes(16);
        const key = scryptSync(PASSWORD, salt, 32, { N: 2 ** 14, r: 8, p: 1 });
        const older = `scrypt$16384$8$1$${salt.toString("base64url")}$${key.toString("base64url")}`;
        await db
          .withTables<{ users: { id: string; password_hash: string } }>()
          .updateTable("users")
          .set({ password_hash: older })
          .where("id", "=", bob.id)
          .execute();
        assert.equal(await verifyCredentials(db, "bob", "wrong password, long"), undefined);
        assert.equal(await storedHash(db, bob.id), older, "a failed sign-in changes nothing");
        assert.equal((await verifyCredentials(db, "bob", PASSWORD))?.id, bob.id);
        const rehashed = await storedHash(db, bob.id);
        assert.notEqual(rehashed, older);
        assert.equal(needsRehash(rehashed), false);
        assert.equal(hashParameters(rehashed)?.N, 2 ** 15);
        assert.ok(await verifyCredentials(db, "bob", PASSWORD));
      });
    });

    describe("setPassword, grantUser, removeUser", () => {
      it("sets a new password: the old one stops working", async () => {
        const user = await setPassword(db, "alice.smith@example", "the new passphrase 2");
        assert.equal(user.username, "Alice.Smith@example");
        assert.equal(await verifyCredentials(db, "Alice.Smith@example", PASSWORD), undefined);
        assert.ok(await verifyCredentials(db, "Alice.Smith@example", "the new passphrase 2"));
      });

      it("refuses a weak password or an unknown user", async () => {
        await assert.rejects(setPassword(db, "bob", "tiny"), rejectsWith("weak-password", /at least 12/));
        await assert.rejects(
          setPassword(db, "nobody", PASSWORD),
          rejectsWith("unknown", /^No user named 'nobody'/),
        );
      });

      it("replaces the role and sets the application list", async () => {
        const granted = await grantUser(db, "ALICE.SMITH@EXAMPLE", {
          role: "admin",
          applications: ["claims-portal"],
        });
        assert.deepEqual([granted.roles, granted.applications], [["admin"], ["claims-portal"]]);
        const back = await grantUser(db, "Alice.Smith@example", { role: "viewer" });
        assert.deepEqual([back.roles, back.applications], [["viewer"], []]);
        assert.deepEqual(await findUserByName(db, "Alice.Smith@example"), back);
        await assert.rejects(grantUser(db, "nobody", { role: "viewer" }), rejectsWith("unknown", /nobody/));
        await assert.rejects(
          grantUser(db, "bob", { role: "owner" as "admin" }),
          rejectsWith("invalid-role", /got 'owner'/),
        );
      });

      it("removes a user by name in any case: it can no longer sign in", async () => {
        const carol = (await findUserByName(db, "Carol")) as UserRecord;
        assert.equal(await removeUser(db, "CAROL"), true);
        assert.equal(await removeUser(db, "Carol"), false);
        assert.equal(await findUserById(db, carol.id), undefined);
        assert.equal(await verifyCredentials(db, "Carol", PASSWORD), undefined);
        assert.equal(await removeUser(db, "not valid"), false);
      });
    });

    describe("ensureAdminUser on a store that already has users", () => {
      it("creates nothing", async () => {
        assert.deepEqual(await ensureAdminUser(db, {}), { created: false });
        assert.equal(await findUserByName(db, "admin"), undefined);
      });
    });
  });

  describe(`ensureAdminUser with IMAGING_ADMIN_PASSWORD (${kind})`, () => {
    let test: TestStore;
    let store: StoreHandle;
    before(async () => {
      test = await createTestStore(kind);
      store = await openStore({ databaseUrl: test.databaseUrl, sqliteFile: test.sqliteFile });
    });
    after(async () => {
      await store?.close();
      await test?.drop();
    });

    it("refuses a weak given password, naming the variable", async () => {
      await assert.rejects(
        ensureAdminUser(store.db, { password: "admin" }),
        rejectsWith("weak-password", /^IMAGING_ADMIN_PASSWORD is refused: the password must be at least 12/),
      );
      assert.deepEqual(await listUsers(store.db), []);
    });

    it("uses the given password and returns none, once even when starts race", async () => {
      const results = await Promise.all([
        ensureAdminUser(store.db, { password: "given admin password" }),
        ensureAdminUser(store.db, { password: "given admin password" }),
      ]);
      assert.deepEqual(results.map((r) => r.created).sort(), [false, true]);
      assert.ok(results.every((r) => r.generatedPassword === undefined));
      const users = await listUsers(store.db);
      assert.deepEqual(
        users.map((u) => [u.username, u.roles]),
        [["admin", ["admin"]]],
      );
      assert.ok(await verifyCredentials(store.db, "admin", "given admin password"));
    });
  });
}
