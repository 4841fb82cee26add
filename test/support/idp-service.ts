import type { Kysely } from "kysely";
import { loadSettings } from "../../src/config/load-config.ts";
import { resolveRuntimeConfig } from "../../src/config/runtime-config.ts";
import type { Settings } from "../../src/config/settings.ts";
import { createUser } from "../../src/domain/users.ts";
import { CIMD_CONDITION, CIMD_EXECUTOR, policyNameOf, profileNameOf } from "../../src/idp/cimd/model.ts";
import type { EmbeddedIdpStartOptions } from "../../src/idp/provider/index.ts";
import { type RunningService, startService } from "../../src/service.ts";
import { createCimdClient } from "../../src/store/cimd.ts";
import { openStore, type StoreHandle } from "../../src/store/database.ts";
import type { Database } from "../../src/store/schema.ts";
import { freePort, internalPortsBeside } from "./service.ts";
import type { TestStore } from "./stores.ts";

/** The embedded identity provider's test service: the real service, its users and CIMD clients seeded. */

export const USERS = {
  alice: { password: "alice-password-1234", role: "admin" as const, applications: [] as string[] },
  bob: { password: "bob-password-123456", role: "viewer" as const, applications: ["storefront-web"] },
};

export async function seedUsers(db: Kysely<Database>): Promise<void> {
  for (const [username, user] of Object.entries(USERS)) {
    await createUser(db, {
      username,
      password: user.password,
      role: user.role,
      applications: user.applications,
    });
  }
}

/** Registers a CIMD client the way `imaging cimd add` does (HTTPS variant), trusting the test host. */
export async function seedCimdClient(db: Kysely<Database>, name: string, clientId: string): Promise<void> {
  const host = new URL(clientId).hostname;
  await createCimdClient(db, {
    client: name,
    clientId,
    profile: {
      name: profileNameOf(name),
      executor: CIMD_EXECUTOR,
      allowHttpScheme: false,
      restrictSameDomain: false,
      onlyAllowConfidentialClient: false,
      trustedDomains: [host, "localhost", "127.0.0.1"],
    },
    policy: {
      name: policyNameOf(name),
      condition: CIMD_CONDITION,
      uriSchemes: ["https"],
      trustedDomains: [host],
      profiles: [profileNameOf(name)],
      enabled: true,
    },
  });
}

export interface IdpService {
  service: RunningService;
  base: string;
  issuer: string;
  mcp: string;
  gatekeeper: string;
  stop(): Promise<void>;
}

/** The real service with the embedded identity provider (no IDP_ISSUER), base_url = its real address. */
export async function startIdpService(
  store: TestStore,
  options: {
    seed?: (store: StoreHandle) => Promise<void>;
    idp?: EmbeddedIdpStartOptions;
    port?: number;
    overrides?: Partial<Record<keyof Settings, string | number | undefined>>;
  } = {},
): Promise<IdpService> {
  if (options.seed) {
    // The seed's reads on its own connection: a read worker thread (~0.15 s of CPU to start) for a few
    // lookups; the service opens the store again with its read workers.
    const handle = await openStore({
      databaseUrl: store.databaseUrl,
      sqliteFile: store.sqliteFile,
      readWorkers: 0,
    });
    try {
      await options.seed(handle);
    } finally {
      await handle.close();
    }
  }
  const port = options.port ?? (await freePort());
  const base =
    typeof options.overrides?.publicUrl === "string"
      ? options.overrides.publicUrl
      : `http://127.0.0.1:${port}`;
  const settings = loadSettings({
    env: {},
    overrides: {
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
  const service = await startService(await resolveRuntimeConfig(settings), { idp: options.idp });
  return {
    service,
    base,
    issuer: `${base}/auth/realms/imaging`,
    mcp: `${base}/mcp`,
    gatekeeper: `${base}/mcp/gatekeeper`,
    stop: () => service.stop(),
  };
}
