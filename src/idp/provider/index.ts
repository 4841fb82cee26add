import type { Kysely } from "kysely";
import type { RuntimeConfig } from "../../config/runtime-config.ts";
import { MCP_SCOPES } from "../../contracts/platform.ts";
import { ensureAdminUser } from "../../domain/users.ts";
import { loadCimdConfig } from "../../store/cimd.ts";
import type { Database } from "../../store/schema.ts";
import { type CaOption, createCimdFetcher } from "../cimd/fetcher.ts";
import { resolveCimdClient } from "../cimd/resolve.ts";
import { parseTrustedHosts } from "../registration/policy.ts";
import { secretVault } from "../secrets-key.ts";
import { ensureStoredSecret } from "../stored-secrets.ts";
import { cimdResolver } from "./cimd-clients.ts";
import { createEmbeddedIdp, type EmbeddedIdp } from "./embedded-idp.ts";
import { embeddedIssuer, realmDefinition } from "./realm.ts";
import type { ThrottleOptions } from "./throttle.ts";

export type { EmbeddedIdp } from "./embedded-idp.ts";
export { identityProviderRoutes } from "./mount.ts";
export { embeddedIssuer, KEY_RETENTION_SECONDS, LIFETIMES, realmDefinition } from "./realm.ts";

/** Options of the embedded identity provider that are not settings (start-up and tests). */
export interface EmbeddedIdpStartOptions {
  /** Password of the `admin` user created when the store has no user (IMAGING_ADMIN_PASSWORD). */
  adminPassword?: string | undefined;
  /** Extra CA certificates trusted when fetching client metadata documents (internal PKI, tests). */
  cimdCa?: CaOption | undefined;
  throttle?: Partial<ThrottleOptions>;
  /** Registration rate limit (tests); the policy comes from the settings. */
  registration?: { perAddress?: number; windowMs?: number };
  keyWatchIntervalMs?: number;
  log?: (level: "info" | "warn" | "error", message: string) => void;
}

interface StartedEmbeddedIdp {
  idp: EmbeddedIdp;
  /** Whether this start created the `admin` user, with its password when it was generated. */
  admin: { created: boolean; generatedPassword?: string };
  /** The secret of the token exchange client (configured, or the store's), for the gateway's exchanger. */
  exchangeClientSecret: string;
}

/**
 * The embedded provider runs unless IDP=keycloak, when the configured issuer is its own URL (IDP_ISSUER
 * unset or equal to it).
 */
export function usesEmbeddedIdp(
  config: Pick<RuntimeConfig, "issuer" | "baseUrl" | "realm" | "idp">,
): boolean {
  return config.idp !== "keycloak" && config.issuer === embeddedIssuer(config.baseUrl, config.realm);
}

/**
 * Everything the embedded identity provider needs at start, created idempotently: the `admin` user
 * when the store has no user, the secret of `mcp-token-exchange` (unless configured), the signing and
 * cookie keys, sealed in the store (imported once from an older data directory); then the provider.
 */
export async function startEmbeddedIdp(
  config: RuntimeConfig,
  db: Kysely<Database>,
  options: EmbeddedIdpStartOptions = {},
): Promise<StartedEmbeddedIdp> {
  const admin = await ensureAdminUser(db, { password: options.adminPassword });
  const vault = secretVault(db, config);
  const exchangeClientSecret =
    config.tokenExchangeClientSecret ??
    (await ensureStoredSecret(vault, config.tokenExchangeClientId, config.dataDir));
  const fetcher = createCimdFetcher({ ca: options.cimdCa });
  const idp = await createEmbeddedIdp({
    realm: realmDefinition({
      baseUrl: config.baseUrl,
      realm: config.realm,
      exchangeClientId: config.tokenExchangeClientId,
    }),
    db,
    vault,
    dataDir: config.dataDir,
    exchangeClientSecret,
    cimd: cimdResolver(resolveCimdClient, { config: () => loadCimdConfig(db), fetcher }),
    throttle: options.throttle,
    registration: {
      ...options.registration,
      policy: {
        mode: config.dynamicClientRegistration,
        trustedHosts: parseTrustedHosts(config.dynamicClientRegistrationHosts),
        mcpScopes: MCP_SCOPES,
      },
    },
    keyWatchIntervalMs: options.keyWatchIntervalMs ?? config.keyPollInterval * 1000,
    log: options.log,
  });
  return {
    idp: {
      ...idp,
      async close() {
        await idp.close();
        await fetcher.close();
      },
    },
    admin,
    exchangeClientSecret,
  };
}
