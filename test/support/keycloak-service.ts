import { loadSettings } from "../../src/config/load-config.ts";
import { resolveRuntimeConfig } from "../../src/config/runtime-config.ts";
import type { Settings } from "../../src/config/settings.ts";
import { toKeycloakPolicy, toKeycloakProfile } from "../../src/idp/cimd/keycloak.ts";
import {
  CIMD_CONDITION,
  CIMD_EXECUTOR,
  policyNameOf,
  profileNameOf,
  variantSettings,
} from "../../src/idp/cimd/model.ts";
import type { KeycloakAdmin } from "../../src/idp/keycloak/admin.ts";
import { type RunningService, startService } from "../../src/service.ts";
import { USERS } from "./idp-service.ts";
import {
  connectTestAdmin,
  keycloakEnv,
  keycloakSettings,
  type TestKeycloak,
  uniqueRealm,
  useKeycloak,
} from "./keycloak.ts";
import { freePort, internalPortsBeside } from "./service.ts";
import { createTestStore, type TestStore } from "./stores.ts";

export interface KeycloakService {
  service: RunningService;
  keycloak: TestKeycloak;
  realm: string;
  /** base_url = the gateway's real address. */
  base: string;
  issuer: string;
  mcp: string;
  gatekeeper: string;
  store: TestStore;
  /** Environment for `imaging ...` commands working on the same deployment (runCli). */
  env: Record<string, string>;
  /** Admin API client working in the realm (Keycloak's master administrator). */
  admin: KeycloakAdmin;
  stop(): Promise<void>;
}

/**
 * The real service with IDP=keycloak against the run's test Keycloak, in a realm of its own: start-up
 * provisioning included, the gateway fronting Keycloak under /auth.
 */
export async function startKeycloakService(
  options: {
    realm?: string;
    store?: TestStore;
    /** The gateway's port (a restart keeps base_url); a free one otherwise. */
    port?: number;
    overrides?: Partial<Record<keyof Settings, string | number | undefined>>;
    /** The gateway's registration rate limit (DYNAMIC_CLIENT_REGISTRATION on), for tests registering more. */
    registration?: { perAddress?: number };
  } = {},
): Promise<KeycloakService> {
  const keycloak = await useKeycloak();
  const realm = options.realm ?? uniqueRealm("svc");
  const store = options.store ?? (await createTestStore("sqlite"));
  const port = options.port ?? (await freePort());
  const base = `http://127.0.0.1:${port}`;
  const env: Record<string, string> = {
    ...keycloakEnv(keycloak, realm),
    PUBLIC_URL: base,
    IMAGING_DATA_DIR: store.dataDir,
    ...(store.databaseUrl ? { DATABASE_URL: store.databaseUrl } : {}),
  };
  const settings = loadSettings({
    env: {},
    overrides: {
      ...keycloakSettings(keycloak, realm),
      dataDir: store.dataDir,
      databaseUrl: store.databaseUrl,
      port,
      ...(await internalPortsBeside(port)),
      bindAddress: "127.0.0.1",
      publicUrl: base,
      logLevel: "silent",
      ...options.overrides,
    },
  });
  const service = await startService(
    await resolveRuntimeConfig(settings),
    options.registration ? { idp: { registration: options.registration } } : {},
  );
  const admin = await connectTestAdmin(keycloak, realm);
  return {
    service,
    keycloak,
    realm,
    base,
    issuer: `${base}/auth/realms/${realm}`,
    mcp: `${base}/mcp`,
    gatekeeper: `${base}/mcp/gatekeeper`,
    store,
    env,
    admin,
    stop: async () => {
      await service.stop();
      if (!options.store) await store.drop();
    },
  };
}

/** The embedded-provider test users (USERS), made in Keycloak: realm role, applications, a complete profile. */
export async function seedKeycloakUsers(admin: KeycloakAdmin): Promise<void> {
  for (const [username, user] of Object.entries(USERS)) {
    const { id } = await admin.users.create({
      username,
      enabled: true,
      email: `${username}@example.com`,
      emailVerified: true,
      firstName: username,
      lastName: "Tester",
      attributes: { applications: user.applications },
    });
    await admin.users.resetPassword({
      id,
      credential: { type: "password", value: user.password, temporary: false },
    });
    const role = await admin.roles.findOneByName({ name: user.role });
    if (!role?.id) throw new Error(`realm role ${user.role} missing: was the realm provisioned?`);
    await admin.users.addRealmRoleMappings({ id, roles: [{ id: role.id, name: user.role }] });
  }
}

/**
 * A CIMD profile and policy for a test client, as the specification's tables have them (HTTPS variant
 * unless `http`), appended to the realm's lists the way an administrator's console would.
 */
export async function seedKeycloakCimdClient(
  admin: KeycloakAdmin,
  name: string,
  clientId: string,
  options: { http?: boolean } = {},
): Promise<void> {
  const host = new URL(clientId).hostname;
  const { allowHttpScheme, uriSchemes } = variantSettings(Boolean(options.http));
  const profiles = (await admin.clientPolicies.listProfiles({ includeGlobalProfiles: false })).profiles ?? [];
  await admin.clientPolicies.createProfiles({
    profiles: [
      ...profiles,
      toKeycloakProfile({
        name: profileNameOf(name),
        executor: CIMD_EXECUTOR,
        allowHttpScheme,
        restrictSameDomain: false,
        onlyAllowConfidentialClient: false,
        trustedDomains: [host, "localhost", "127.0.0.1"],
      }),
    ],
  } as never);
  const policies = (await admin.clientPolicies.listPolicies({ includeGlobalPolicies: false })).policies ?? [];
  await admin.clientPolicies.updatePolicy({
    policies: [
      ...policies,
      toKeycloakPolicy({
        name: policyNameOf(name),
        condition: CIMD_CONDITION,
        uriSchemes,
        trustedDomains: [host],
        profiles: [profileNameOf(name)],
        enabled: true,
      }),
    ],
  } as never);
}
