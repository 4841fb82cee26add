import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import type { Check } from "../../src/doctor/check.ts";
import { connectKeycloakAdmin } from "../../src/idp/keycloak/admin.ts";
import { runCli, runCliWithStdin } from "../support/cli.ts";
import {
  connectTestAdmin,
  KEYCLOAK_ADMIN,
  keycloakHome,
  type TestKeycloak,
  uniqueRealm,
  useKeycloak,
} from "../support/keycloak.ts";
import { type KeycloakService, startKeycloakService } from "../support/keycloak-service.ts";
import { createTestStore, type TestStore } from "../support/stores.ts";

const run = promisify(execFile);
const DOCS = new URL("../../docs/keycloak.md", import.meta.url);
const CLIENT_ID = "imaging-provisioner";

/** The shell block that follows `<!-- marker ... -->` in docs/keycloak.md, as a reader would copy it. */
function documentedBlock(marker: string): string {
  const text = readFileSync(DOCS, "utf8");
  const at = text.indexOf(`<!-- ${marker}`);
  assert.ok(at >= 0, `docs/keycloak.md has the block marked ${marker}`);
  const block = /```sh\n([\s\S]*?)\n\s*```/.exec(text.slice(at));
  assert.ok(block?.[1], `a sh block follows the marker ${marker}`);
  return block[1]
    .split("\n")
    .map((line) => line.trimStart())
    .join("\n");
}

/**
 * The service-account alternative of docs/keycloak.md, exactly as written there: its kcadm.sh commands
 * run against the real Keycloak, then the platform runs on that service account alone: provisioning
 * a new realm (and a second start changing nothing), the `imaging` commands, doctor; and, with the
 * second documented block, a realm that someone else created.
 */
describe("the documented service account administers the platform's realm (Keycloak)", () => {
  let keycloak: TestKeycloak;
  let store: TestStore;
  let home: string;
  let secret: string;

  /**
   * Runs a documented block with what the reader's shell holds (KEYCLOAK_URL, the bootstrap admin), in
   * the directory the reader is in: beside the distribution, or inside it after the first block's cd.
   */
  const runDocumented = async (marker: string, realm = "imaging", cwd = dirname(keycloakHome())) => {
    const { stdout } = await run("bash", ["--norc", "-euo", "pipefail", "-c", documentedBlock(marker)], {
      cwd,
      env: {
        PATH: process.env.PATH,
        HOME: home,
        KEYCLOAK_URL: keycloak.url,
        KEYCLOAK_REALM: realm,
        KC_BOOTSTRAP_ADMIN_USERNAME: KEYCLOAK_ADMIN.username,
        KC_BOOTSTRAP_ADMIN_PASSWORD: KEYCLOAK_ADMIN.password,
        ...(process.env.JAVA_HOME ? { JAVA_HOME: process.env.JAVA_HOME } : {}),
      },
      timeout: 180_000,
    });
    return stdout;
  };
  const serviceAccount = {
    keycloakAdminUsername: undefined,
    keycloakAdminPassword: undefined,
    keycloakAdminClientId: CLIENT_ID,
  };
  const envOf = (kc: KeycloakService) => ({
    ...kc.env,
    KEYCLOAK_ADMIN_USERNAME: "",
    KEYCLOAK_ADMIN_PASSWORD: "",
    KEYCLOAK_ADMIN_CLIENT_ID: CLIENT_ID,
    KEYCLOAK_ADMIN_CLIENT_SECRET: secret,
    DATABASE_URL: "",
    IMAGING_CONFIG: "",
    TOKEN_EXCHANGE_CLIENT_SECRET: "",
  });

  /** What an administrator does next with the service account: users, CIMD, doctor. */
  async function commandsWork(kc: KeycloakService) {
    const env = envOf(kc);
    const user = await runCliWithStdin(
      [
        "users",
        "add",
        "carol",
        "--role",
        "viewer",
        "--app",
        "storefront-web",
        "--email",
        "carol@example.com",
        "--first-name",
        "Carol",
        "--last-name",
        "Tester",
        "--password-stdin",
      ],
      "carol-password-123456",
      env,
    );
    assert.equal(user.code, 0, user.stderr);
    const listed = await runCli(["users", "list", "--json"], env);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /"carol"/);
    const cimd = await runCli(["cimd", "add", "claude-code", "--preset", "claude-code", "--http"], env);
    assert.equal(cimd.code, 0, cimd.stderr);
    const doctor = await runCli(["doctor", "--json"], env);
    const failing = (JSON.parse(doctor.stdout) as Check[]).filter((c) => c.verdict === "fail");
    assert.equal(doctor.code, 0, failing.map((c) => `${c.id}: ${c.detail}`).join("\n"));
  }

  before(async () => {
    keycloak = await useKeycloak();
    store = await createTestStore("sqlite");
    home = mkdtempSync(join(tmpdir(), "kcadm-home-"));
    // A server the run keeps across files: a service account left by an earlier run goes first.
    const master = await connectTestAdmin(keycloak, "master");
    for (const client of await master.clients.find({ clientId: CLIENT_ID }))
      if (client.id) await master.clients.del({ id: client.id });
  });
  after(async () => {
    rmSync(home, { recursive: true, force: true });
    await store?.drop();
  });

  it("creates the service account with the documented kcadm.sh commands, which print its secret", async () => {
    const stdout = await runDocumented("service-account:");
    secret = stdout.trim().split("\n").at(-1) ?? "";
    assert.match(secret, /^[A-Za-z0-9]{32,}$/, `the last line is the secret: ${stdout}`);
    const master = await connectTestAdmin(keycloak, "master");
    const [client] = await master.clients.find({ clientId: CLIENT_ID });
    assert.equal(client?.serviceAccountsEnabled, true);
    assert.equal(client?.publicClient, false);
    const account = await master.clients.getServiceAccountUser({ id: client?.id as string });
    const roles = (await master.users.listRealmRoleMappings({ id: account.id as string })).map((r) => r.name);
    assert.ok(roles.includes("create-realm"), roles.join(", "));
    assert.ok(!roles.includes("admin"), "not an administrator of every realm");
  });

  it("provisions a new realm on the service account alone; a second start changes nothing; the commands work", async () => {
    const realm = uniqueRealm("sa");
    const overrides = { ...serviceAccount, keycloakAdminClientSecret: secret };
    let kc = await startKeycloakService({ realm, store, overrides });
    try {
      const changes = kc.service.keycloak?.changes ?? [];
      assert.ok(changes.includes(`realm ${realm}`), changes.join("\n"));
      assert.equal(
        changes.length,
        17,
        `the first start's change count docs/keycloak.md quotes:\n${changes.join("\n")}`,
      );
      const port = Number(new URL(kc.base).port);
      await kc.stop();
      kc = await startKeycloakService({ realm, store, port, overrides });
      assert.deepEqual(kc.service.keycloak?.changes, []);
      assert.deepEqual(kc.service.keycloak?.warnings, []);
      await commandsWork(kc);

      // The platform's realm and nothing else.
      const viaAccount = await connectKeycloakAdmin({
        keycloakUrl: keycloak.url,
        keycloakAdminRealm: "master",
        keycloakAdminClientId: CLIENT_ID,
        keycloakAdminClientSecret: secret,
        realm: "master",
      });
      await assert.rejects(viaAccount.users.find({ max: 1 }), /403|Forbidden/i, "no rights in master");
    } finally {
      await kc.stop();
    }
  });

  it("administers a realm someone else created once given the documented roles of its administration client", async () => {
    const realm = uniqueRealm("sa-existing");
    const master = await connectTestAdmin(keycloak, "master");
    await master.realms.create({ realm, enabled: true });
    const overrides = { ...serviceAccount, keycloakAdminClientSecret: secret };
    await assert.rejects(
      startKeycloakService({ realm, store, overrides }),
      new RegExp(
        `refused the administrator's request in realm ${realm} \\(HTTP 403\\): it needs the roles manage-realm, manage-clients and manage-users of client ${realm}-realm in realm master`,
      ),
      "create-realm alone gives no rights on another's realm",
    );
    await runDocumented("service-account-existing-realm:", realm, keycloakHome());
    const kc = await startKeycloakService({ realm, store, overrides });
    try {
      assert.ok((kc.service.keycloak?.changes ?? []).length > 0, "provisioned the existing realm");
      await commandsWork(kc);
    } finally {
      await kc.stop();
    }
  });
});
