import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { CimdPolicy, CimdProfile } from "../../src/idp/cimd/model.ts";
import {
  CimdStoreError,
  createCimdClient,
  getCimdClientState,
  linkCimdClient,
  listCimdClients,
  loadCimdConfig,
  removeCimdClient,
  unlinkCimdClient,
  updateCimdClient,
} from "../../src/store/cimd.ts";
import { openStore, type StoreHandle } from "../../src/store/database.ts";
import { createTestStore, STORE_KINDS, type TestStore } from "../support/stores.ts";

const profileOf = (client: string, trustedDomains: string[], allowHttpScheme = false): CimdProfile => ({
  name: `cimd-profile-${client}`,
  executor: "client-id-metadata-document",
  allowHttpScheme,
  restrictSameDomain: false,
  onlyAllowConfidentialClient: false,
  trustedDomains,
});
const policyOf = (client: string, trustedDomains: string[], uriSchemes = ["https"]): CimdPolicy => ({
  name: `cimd-policy-${client}`,
  condition: "client-id-uri",
  uriSchemes,
  trustedDomains,
  profiles: [`cimd-profile-${client}`],
  enabled: true,
});

for (const kind of STORE_KINDS) {
  describe(`CIMD store on ${kind}`, () => {
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

    it("starts empty", async () => {
      assert.deepEqual(await loadCimdConfig(store.db), { profiles: [], policies: [] });
      assert.deepEqual(await listCimdClients(store.db), []);
    });

    it("creates a client with its linked profile and policy, lists in byte order", async () => {
      const created = await createCimdClient(store.db, {
        client: "vscode",
        clientId: "https://vscode.dev/oauth/client-metadata.json",
        profile: profileOf("vscode", ["vscode.dev", "code.visualstudio.com", "localhost", "127.0.0.1"]),
        policy: policyOf("vscode", ["vscode.dev"]),
      });
      assert.equal(created.profile, "cimd-profile-vscode");
      await createCimdClient(store.db, {
        client: "claude-code",
        clientId: "https://claude.ai/oauth/claude-code-client-metadata",
        profile: profileOf("claude-code", ["claude.ai", "localhost", "127.0.0.1"]),
        policy: policyOf("claude-code", ["claude.ai"]),
      });
      await createCimdClient(store.db, {
        client: "Dev",
        clientId: "http://dev.example.test/client.json",
        profile: profileOf("Dev", ["dev.example.test"], true),
        policy: policyOf("Dev", ["dev.example.test"], ["https", "http"]),
      });
      assert.deepEqual(
        (await listCimdClients(store.db)).map((c) => c.client),
        ["Dev", "claude-code", "vscode"],
      );
      const config = await loadCimdConfig(store.db);
      assert.deepEqual(
        config.policies.map((p) => p.name),
        ["cimd-policy-Dev", "cimd-policy-claude-code", "cimd-policy-vscode"],
      );
      assert.deepEqual(
        config.profiles.find((p) => p.name === "cimd-profile-vscode"),
        {
          name: "cimd-profile-vscode",
          executor: "client-id-metadata-document",
          allowHttpScheme: false,
          restrictSameDomain: false,
          onlyAllowConfidentialClient: false,
          trustedDomains: ["vscode.dev", "code.visualstudio.com", "localhost", "127.0.0.1"],
        },
      );
      const dev = await getCimdClientState(store.db, "Dev");
      assert.deepEqual(dev?.policy, {
        name: "cimd-policy-Dev",
        condition: "client-id-uri",
        uriSchemes: ["https", "http"],
        trustedDomains: ["dev.example.test"],
        profiles: ["cimd-profile-Dev"],
        enabled: true,
      });
      assert.equal(dev?.profile?.allowHttpScheme, true);
      assert.equal(dev?.client.clientId, "http://dev.example.test/client.json");
    });

    it("refuses to add a client, profile or policy twice, leaving nothing half-made", async () => {
      await assert.rejects(
        createCimdClient(store.db, {
          client: "vscode",
          clientId: "https://vscode.dev/x",
          profile: profileOf("other", []),
          policy: policyOf("other", []),
        }),
        (e: unknown) => e instanceof CimdStoreError && e.code === "exists",
      );
      // A profile of that name left by other means (no imaging path makes one without its client).
      await store.db
        .insertInto("cimd_profiles")
        .values({
          name: "cimd-profile-orphan",
          executor: "client-id-metadata-document",
          allow_http_scheme: 0,
          restrict_same_domain: 0,
          only_allow_confidential_client: 0,
          trusted_domains: '["a.example"]',
          updated_at: new Date().toISOString(),
        })
        .execute();
      await assert.rejects(
        createCimdClient(store.db, {
          client: "orphan",
          clientId: "https://a.example/x",
          profile: profileOf("orphan", ["a.example"]),
          policy: policyOf("orphan", ["a.example"]),
        }),
        /client profile cimd-profile-orphan already exists/,
      );
      assert.equal(await getCimdClientState(store.db, "orphan"), undefined);
      const config = await loadCimdConfig(store.db);
      assert.ok(!config.policies.some((p) => p.name === "cimd-policy-orphan"));
      await store.db.deleteFrom("cimd_profiles").where("name", "=", "cimd-profile-orphan").execute();
    });

    it("unlinks and links the profile (idempotent)", async () => {
      const unlinked = await unlinkCimdClient(store.db, "claude-code");
      assert.deepEqual(unlinked.policy?.profiles, []);
      assert.deepEqual((await getCimdClientState(store.db, "claude-code"))?.policy?.profiles, []);
      await linkCimdClient(store.db, "claude-code");
      const linked = await linkCimdClient(store.db, "claude-code");
      assert.deepEqual(linked.policy?.profiles, ["cimd-profile-claude-code"]);
      await assert.rejects(linkCimdClient(store.db, "nobody"), /No CIMD client named nobody/);
    });

    it("updates lists, switches and the client_id in one transaction", async () => {
      const state = await updateCimdClient(store.db, "vscode", (current) => ({
        clientId: "https://vscode.dev/oauth/other.json",
        profile: current.profile && {
          ...current.profile,
          trustedDomains: ["vscode.dev"],
          restrictSameDomain: true,
        },
        policy: current.policy && { ...current.policy, enabled: false, uriSchemes: ["https", "http"] },
      }));
      assert.equal(state.client.clientId, "https://vscode.dev/oauth/other.json");
      assert.deepEqual(state.profile?.trustedDomains, ["vscode.dev"]);
      assert.equal(state.profile?.restrictSameDomain, true);
      assert.equal(state.policy?.enabled, false);
      assert.deepEqual(state.policy?.uriSchemes, ["https", "http"]);
      await assert.rejects(
        updateCimdClient(store.db, "vscode", (current) => {
          throw new Error(`refused ${current.client.client}`);
        }),
        /refused vscode/,
      );
    });

    it("replaces a profile or policy whole when a change writes it (no merge with the stored one)", async () => {
      await updateCimdClient(store.db, "Dev", () => ({
        policy: { ...policyOf("Dev", ["*.example.org"]), profiles: [] },
      }));
      await updateCimdClient(store.db, "Dev", () => ({
        policy: { ...policyOf("Dev", ["example.org"]), enabled: false },
      }));
      assert.deepEqual((await getCimdClientState(store.db, "Dev"))?.policy, {
        ...policyOf("Dev", ["example.org"]),
        enabled: false,
      });
    });

    it("removes a client with its profile and policy", async () => {
      assert.ok(await removeCimdClient(store.db, "Dev"));
      assert.equal(await removeCimdClient(store.db, "Dev"), false);
      assert.equal(await getCimdClientState(store.db, "Dev"), undefined);
      const config = await loadCimdConfig(store.db);
      assert.deepEqual(
        config.profiles.map((p) => p.name),
        ["cimd-profile-claude-code", "cimd-profile-vscode"],
      );
      assert.deepEqual(
        config.policies.map((p) => p.name),
        ["cimd-policy-claude-code", "cimd-policy-vscode"],
      );
    });
  });
}
