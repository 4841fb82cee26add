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

/** The SQLite store file of a data directory. */
export function sqliteFileIn(dataDir: string): string {
  return join(resolve(dataDir), "imaging.db");
}

export interface RuntimeContext {
  platform?: NodeJS.Platform;
  fqdn?: string;
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
    fqdn: context.fqdn ?? (settings.publicUrl ? "" : await detectFqdn()),
    platform: context.platform ?? process.platform,
  });
  if (!result.ok) throw new ConfigError(`Invalid configuration:\n  ${result.reason}`);
  const dataDir = resolve(settings.dataDir);
  return {
    ...settings,
    https,
    port,
    baseUrl: result.baseUrl,
    issuer: settings.issuer ?? `${result.baseUrl}/auth/realms/${settings.realm}`,
    dataDir,
    sqliteFile: sqliteFileIn(dataDir),
  };
}
