import { join, resolve } from "node:path";
import { HTTP_PORT, HTTPS_PORT, resolveBaseUrl } from "./base-url.ts";
import { detectFqdn } from "./fqdn.ts";
import { ConfigError } from "./load-config.ts";
import type { Settings } from "./settings.ts";

export interface RuntimeConfig extends Settings {
  https: boolean;
  /** The gateway's user access port. */
  port: number;
  baseUrl: string;
  issuer: string;
  dataDir: string;
  sqliteFile: string;
}

const LOOPBACK = "127.0.0.1";

/** The SQLite store file of a data directory. */
export function sqliteFileIn(dataDir: string): string {
  return join(resolve(dataDir), "imaging.db");
}

interface RuntimeContext {
  platform?: NodeJS.Platform;
  fqdn?: string;
  /**
   * `--local` (development on this machine): the gateway listens on loopback and base_url defaults to
   * localhost. Nothing else changes: the port, PUBLIC_URL and every other setting are read as usual.
   */
  local?: boolean;
}

export async function resolveRuntimeConfig(
  settings: Settings,
  context: RuntimeContext = {},
): Promise<RuntimeConfig> {
  if (Boolean(settings.tlsCertFile) !== Boolean(settings.tlsKeyFile)) {
    throw new ConfigError("Invalid configuration:\n  TLS_CERT_FILE and TLS_KEY_FILE must be set together");
  }
  const https = Boolean(settings.tlsCertFile);
  const port = settings.port ?? (https ? HTTPS_PORT : HTTP_PORT);
  const result = resolveBaseUrl({
    publicUrl: settings.publicUrl,
    https,
    port,
    fqdn: context.fqdn ?? (settings.publicUrl || context.local ? "" : await detectFqdn()),
    platform: context.platform ?? process.platform,
    local: context.local,
  });
  if (!result.ok) throw new ConfigError(`Invalid configuration:\n  ${result.reason}`);
  const dataDir = resolve(settings.dataDir);
  const realm = settings.idp === "keycloak" ? (settings.keycloakRealm ?? settings.realm) : settings.realm;
  if (settings.idp === "keycloak") checkKeycloakSettings(settings);
  if (settings.dynamicClientRegistration === "trusted-hosts" && !settings.dynamicClientRegistrationHosts) {
    throw new ConfigError(
      "Invalid configuration:\n  DYNAMIC_CLIENT_REGISTRATION=trusted-hosts needs DYNAMIC_CLIENT_REGISTRATION_HOSTS (comma-separated host names)",
    );
  }
  return {
    ...settings,
    realm,
    ...(context.local ? { bindAddress: LOOPBACK } : {}),
    keycloakUrl: settings.keycloakUrl?.replace(/\/+$/, ""),
    https,
    port,
    baseUrl: result.baseUrl,
    issuer: settings.issuer ?? `${result.baseUrl}/auth/realms/${realm}`,
    dataDir,
    sqliteFile: sqliteFileIn(dataDir),
  };
}

/** IDP=keycloak needs where Keycloak is and one way to administer it. */
function checkKeycloakSettings(settings: Settings): void {
  const problems: string[] = [];
  if (!settings.keycloakUrl) {
    problems.push("KEYCLOAK_URL is required with IDP=keycloak (e.g. http://keycloak.internal:8080/auth)");
  }
  const password = Boolean(settings.keycloakAdminUsername) || Boolean(settings.keycloakAdminPassword);
  const client = Boolean(settings.keycloakAdminClientId) || Boolean(settings.keycloakAdminClientSecret);
  if (password && client) {
    problems.push("set either KEYCLOAK_ADMIN_USERNAME/PASSWORD or KEYCLOAK_ADMIN_CLIENT_ID/SECRET, not both");
  } else if (password && !(settings.keycloakAdminUsername && settings.keycloakAdminPassword)) {
    problems.push("KEYCLOAK_ADMIN_USERNAME and KEYCLOAK_ADMIN_PASSWORD must be set together");
  } else if (client && !(settings.keycloakAdminClientId && settings.keycloakAdminClientSecret)) {
    problems.push("KEYCLOAK_ADMIN_CLIENT_ID and KEYCLOAK_ADMIN_CLIENT_SECRET must be set together");
  } else if (!password && !client) {
    problems.push(
      "IDP=keycloak needs Keycloak admin credentials: KEYCLOAK_ADMIN_USERNAME and KEYCLOAK_ADMIN_PASSWORD, " +
        "or a service-account client KEYCLOAK_ADMIN_CLIENT_ID and KEYCLOAK_ADMIN_CLIENT_SECRET",
    );
  }
  if (problems.length > 0) throw new ConfigError(`Invalid configuration:\n  ${problems.join("\n  ")}`);
}
