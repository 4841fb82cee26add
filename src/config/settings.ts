import { z } from "zod";

/**
 * Every setting of the service, in one place: its environment variable, its config-file key, what it
 * means and its default. The README's configuration table is this list.
 */
export const settingsSchema = z.object({
  dataDir: z.string().min(1).default("./data"),
  databaseUrl: z
    .string()
    .regex(/^postgres(ql)?:\/\//, "a postgres://user:password@host:port/database URL")
    .optional(),
  port: z.coerce.number().int().min(0).max(65535).optional(),
  bindAddress: z.string().min(1).default("0.0.0.0"),
  publicUrl: z.string().optional(),
  tlsCertFile: z.string().min(1).optional(),
  tlsKeyFile: z.string().min(1).optional(),
  restPort: z.coerce.number().int().min(0).max(65535).default(8070),
  internalBindAddress: z.string().min(1).default("127.0.0.1"),
  restUpstreamUrl: z.url({ protocol: /^https?$/ }).optional(),
  mcpAnalysisPort: z.coerce.number().int().min(0).max(65535).default(8282),
  mcpGatekeeperPort: z.coerce.number().int().min(0).max(65535).default(8283),
  mcpAnalysisUpstreamUrl: z.url({ protocol: /^https?$/ }).optional(),
  mcpGatekeeperUpstreamUrl: z.url({ protocol: /^https?$/ }).optional(),
  tokenExchangeClientId: z.string().min(1).default("mcp-token-exchange"),
  tokenExchangeClientSecret: z.string().min(1).optional(),
  corsAllowedOrigins: z
    .string()
    .regex(
      /^(https?:\/\/[^\s,/]+)(\s*,\s*https?:\/\/[^\s,/]+)*$/,
      "comma-separated origins such as https://app.example.com",
    )
    .optional(),
  idpExtraCaFile: z.string().min(1).optional(),
  dynamicClientRegistration: z.enum(["off", "loopback", "trusted-hosts"]).default("off"),
  dynamicClientRegistrationHosts: z
    .string()
    .regex(/^[A-Za-z0-9.-]+(\s*,\s*[A-Za-z0-9.-]+)*$/, "comma-separated host names such as app.example.com")
    .optional(),
  dynamicClientRegistrationMaxClients: z.coerce.number().int().min(1).max(100_000).default(200),
  realm: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/, "letters, digits, '-' or '_'")
    .default("imaging"),
  idp: z.enum(["embedded", "keycloak"]).default("embedded"),
  keycloakUrl: z.url({ protocol: /^https?$/ }).optional(),
  keycloakRealm: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/, "letters, digits, '-' or '_'")
    .optional(),
  keycloakAdminRealm: z.string().min(1).default("master"),
  keycloakAdminUsername: z.string().min(1).optional(),
  keycloakAdminPassword: z.string().min(1).optional(),
  keycloakAdminClientId: z.string().min(1).optional(),
  keycloakAdminClientSecret: z.string().min(1).optional(),
  issuer: z.url({ protocol: /^https?$/ }).optional(),
  jwksUrl: z.url({ protocol: /^https?$/ }).optional(),
  logLevel: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  npmRegistryUrl: z.url({ protocol: /^https?$/ }).default("https://registry.npmjs.org"),
  mavenRepositoryUrl: z.url({ protocol: /^https?$/ }).default("https://repo.maven.apache.org/maven2"),
  mavenLocalRepository: z.string().min(1).optional(),
  osvMirrorUrl: z.url({ protocol: /^https?$/ }).default("https://osv-vulnerabilities.storage.googleapis.com"),
  analysisUploadMaxBytes: z.coerce
    .number()
    .int()
    .min(1024)
    .default(64 * 1024 * 1024),
  shutdownTimeout: z.coerce.number().positive().max(600).default(5),
  storeReadWorkers: z.coerce.number().int().min(0).max(64).optional(),
  secretsKey: z.string().min(1).optional(),
  secretsKeyFile: z.string().min(1).optional(),
  keyPollInterval: z.coerce.number().min(0.1).max(300).default(2),
  metricsPort: z.coerce.number().int().min(0).max(65535).optional(),
  logFormat: z.enum(["auto", "json", "pretty"]).default("auto"),
});

export type Settings = z.infer<typeof settingsSchema>;
export type SettingKey = keyof Settings;

/** Settings whose value is a secret: never printed, nor repeated in an error message. */
export const SECRET_SETTINGS = [
  "tokenExchangeClientSecret",
  "keycloakAdminPassword",
  "keycloakAdminClientSecret",
  "secretsKey",
] as const satisfies readonly SettingKey[];

export const isSecretSetting = (key: string) => (SECRET_SETTINGS as readonly string[]).includes(key);

export interface SettingDoc {
  key: SettingKey;
  env: string;
  description: string;
  defaultText: string;
}

export const settingDocs: readonly SettingDoc[] = [
  {
    key: "dataDir",
    env: "IMAGING_DATA_DIR",
    description: "Directory of the SQLite store and generated secrets",
    defaultText: "./data",
  },
  {
    key: "databaseUrl",
    env: "DATABASE_URL",
    description: "PostgreSQL store instead of SQLite (postgres://user:pass@host:5432/db)",
    defaultText: "unset (SQLite file DATA_DIR/imaging.db)",
  },
  {
    key: "port",
    env: "PORT",
    description: "User access port of the gateway",
    defaultText: "8090 (http), 443 (https)",
  },
  {
    key: "bindAddress",
    env: "IMAGING_BIND_ADDRESS",
    description: "Address the gateway listens on",
    defaultText: "0.0.0.0",
  },
  {
    key: "publicUrl",
    env: "PUBLIC_URL",
    description: "base_url seen by clients, e.g. http://gw.example.com:8090 (required on Windows over http)",
    defaultText: "derived: http://<fqdn>:8090 or https://<fqdn>",
  },
  {
    key: "tlsCertFile",
    env: "TLS_CERT_FILE",
    description: "PEM certificate chain: enables HTTPS on the gateway",
    defaultText: "unset (http)",
  },
  {
    key: "tlsKeyFile",
    env: "TLS_KEY_FILE",
    description: "PEM private key for TLS_CERT_FILE",
    defaultText: "unset",
  },
  {
    key: "restPort",
    env: "REST_PORT",
    description: "Internal port of the REST API service (0 = any free port)",
    defaultText: "8070",
  },
  {
    key: "internalBindAddress",
    env: "INTERNAL_BIND_ADDRESS",
    description: "Address internal services listen on",
    defaultText: "127.0.0.1",
  },
  {
    key: "restUpstreamUrl",
    env: "REST_UPSTREAM_URL",
    description: "REST API the gateway forwards /rest to, when it runs in another process",
    defaultText: "the in-process REST service",
  },
  {
    key: "mcpAnalysisPort",
    env: "MCP_ANALYSIS_PORT",
    description: "Internal port of the analysis MCP server (0 = any free port)",
    defaultText: "8282",
  },
  {
    key: "mcpGatekeeperPort",
    env: "MCP_GATEKEEPER_PORT",
    description: "Internal port of the gatekeeper MCP server (0 = any free port)",
    defaultText: "8283",
  },
  {
    key: "mcpAnalysisUpstreamUrl",
    env: "MCP_ANALYSIS_UPSTREAM_URL",
    description: "Analysis MCP server the gateway forwards /mcp to, when it runs in another process",
    defaultText: "the in-process server",
  },
  {
    key: "mcpGatekeeperUpstreamUrl",
    env: "MCP_GATEKEEPER_UPSTREAM_URL",
    description: "Gatekeeper MCP server the gateway forwards /mcp/gatekeeper to, when it runs elsewhere",
    defaultText: "the in-process server",
  },
  {
    key: "tokenExchangeClientId",
    env: "TOKEN_EXCHANGE_CLIENT_ID",
    description: "Confidential client the gateway exchanges MCP tokens as",
    defaultText: "mcp-token-exchange",
  },
  {
    key: "tokenExchangeClientSecret",
    env: "TOKEN_EXCHANGE_CLIENT_SECRET",
    description: "Its secret (else generated by the embedded identity provider, sealed in the store)",
    defaultText: "from the store",
  },
  {
    key: "corsAllowedOrigins",
    env: "CORS_ALLOWED_ORIGINS",
    description: "Browser origins allowed on the MCP endpoints, besides base_url's and loopback ones",
    defaultText: "none",
  },
  {
    key: "idpExtraCaFile",
    env: "IDP_EXTRA_CA_FILE",
    description: "PEM bundle of extra CAs trusted when fetching client metadata documents",
    defaultText: "system CAs only",
  },
  {
    key: "dynamicClientRegistration",
    env: "DYNAMIC_CLIENT_REGISTRATION",
    description:
      "Dynamic client registration (RFC 7591) for clients without a metadata document: off, loopback (public clients with loopback redirect URIs) or trusted-hosts (also https redirect URIs on DYNAMIC_CLIENT_REGISTRATION_HOSTS)",
    defaultText: "off",
  },
  {
    key: "dynamicClientRegistrationHosts",
    env: "DYNAMIC_CLIENT_REGISTRATION_HOSTS",
    description:
      "Hosts whose https redirect URIs registration accepts in trusted-hosts mode (comma-separated)",
    defaultText: "none",
  },
  {
    key: "dynamicClientRegistrationMaxClients",
    env: "DYNAMIC_CLIENT_REGISTRATION_MAX_CLIENTS",
    description:
      "IDP=keycloak: the realm's anonymous Max Clients registration policy (Keycloak counts every client of the realm)",
    defaultText: "200",
  },
  { key: "realm", env: "IDP_REALM", description: "Identity provider realm", defaultText: "imaging" },
  {
    key: "idp",
    env: "IDP",
    description: "Identity provider: embedded (one machine) or keycloak (production)",
    defaultText: "embedded",
  },
  {
    key: "keycloakUrl",
    env: "KEYCLOAK_URL",
    description:
      "Keycloak as the gateway reaches it, with its /auth path (IDP=keycloak), e.g. http://kc:8080/auth",
    defaultText: "required with IDP=keycloak",
  },
  {
    key: "keycloakRealm",
    env: "KEYCLOAK_REALM",
    description: "Keycloak realm the platform uses (created if missing)",
    defaultText: "IDP_REALM",
  },
  {
    key: "keycloakAdminRealm",
    env: "KEYCLOAK_ADMIN_REALM",
    description: "Realm of the Keycloak administrator or service account",
    defaultText: "master",
  },
  {
    key: "keycloakAdminUsername",
    env: "KEYCLOAK_ADMIN_USERNAME",
    description: "Keycloak administrator (password grant through admin-cli)",
    defaultText: "unset",
  },
  {
    key: "keycloakAdminPassword",
    env: "KEYCLOAK_ADMIN_PASSWORD",
    description: "Its password",
    defaultText: "unset",
  },
  {
    key: "keycloakAdminClientId",
    env: "KEYCLOAK_ADMIN_CLIENT_ID",
    description: "Service-account client with realm-management rights, instead of an administrator",
    defaultText: "unset",
  },
  {
    key: "keycloakAdminClientSecret",
    env: "KEYCLOAK_ADMIN_CLIENT_SECRET",
    description: "Its secret",
    defaultText: "unset",
  },
  {
    key: "issuer",
    env: "IDP_ISSUER",
    description: "Issuer of the tokens the REST API accepts",
    defaultText: "{base_url}/auth/realms/{realm}",
  },
  {
    key: "jwksUrl",
    env: "IDP_JWKS_URL",
    description: "JWKS of the issuer",
    defaultText: "jwks_uri of the issuer's discovery document",
  },
  { key: "logLevel", env: "LOG_LEVEL", description: "Log level (fatal..trace, silent)", defaultText: "info" },
  {
    key: "npmRegistryUrl",
    env: "NPM_REGISTRY_URL",
    description: "npm registry the scanner reads package versions and release dates from (a mirror)",
    defaultText: "https://registry.npmjs.org",
  },
  {
    key: "mavenRepositoryUrl",
    env: "MAVEN_REPOSITORY_URL",
    description: "Maven repository the scanner reads POMs, metadata and artifacts from (a mirror)",
    defaultText: "https://repo.maven.apache.org/maven2",
  },
  {
    key: "mavenLocalRepository",
    env: "MAVEN_LOCAL_REPOSITORY",
    description: "Local Maven repository read before the remote one",
    defaultText: "~/.m2/repository",
  },
  {
    key: "osvMirrorUrl",
    env: "OSV_MIRROR_URL",
    description: "Where `imaging advisories sync` downloads OSV archives (<url>/<ecosystem>/all.zip)",
    defaultText: "https://osv-vulnerabilities.storage.googleapis.com",
  },
  {
    key: "analysisUploadMaxBytes",
    env: "ANALYSIS_UPLOAD_MAX_BYTES",
    description: "Largest analysis document POST /rest/applications/{name}/analyses accepts",
    defaultText: "67108864 (64 MiB)",
  },
  {
    key: "shutdownTimeout",
    env: "SHUTDOWN_TIMEOUT",
    description:
      "Seconds `imaging start` has, after SIGTERM or SIGINT, to finish in-flight requests and exit (a second signal exits at once)",
    defaultText: "5",
  },
  {
    key: "storeReadWorkers",
    env: "STORE_READ_WORKERS",
    description:
      "SQLite: worker threads running the store's reads, each with its own connection (0: on the event loop)",
    defaultText:
      "one per core (2 to 8) plus one kept for short reads, when the REST API runs in the process; else 0",
  },
  {
    key: "metricsPort",
    env: "METRICS_PORT",
    description:
      "Port of the internal listener serving Prometheus metrics at /metrics, on INTERNAL_BIND_ADDRESS (0 = any free port)",
    defaultText: "unset (no metrics listener)",
  },
  {
    key: "logFormat",
    env: "LOG_FORMAT",
    description:
      "Request logs: pretty (human-readable lines), json (one JSON object a line), or auto (pretty when stdout is a terminal)",
    defaultText: "auto",
  },
  {
    key: "secretsKey",
    env: "IMAGING_SECRETS_KEY",
    description:
      "Key sealing the secrets kept in the store (signing keys, exchange secret): 32 bytes, base64 or hex; the same on every replica",
    defaultText: "IMAGING_SECRETS_KEY_FILE, else generated in DATA_DIR/secrets/store-secrets-key.secret",
  },
  {
    key: "secretsKeyFile",
    env: "IMAGING_SECRETS_KEY_FILE",
    description: "File holding that key (e.g. a mounted Kubernetes secret)",
    defaultText: "unset",
  },
  {
    key: "keyPollInterval",
    env: "KEY_POLL_INTERVAL",
    description: "Seconds between checks of the store for a signing key rotation made by another replica",
    defaultText: "2",
  },
];
