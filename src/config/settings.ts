import { z } from "zod";

/**
 * How one setting is declared: everything else (validation, the environment and config-file names,
 * `config show`, secret masking, the configuration table of docs/administrators.md) is derived from these declarations,
 * so a setting cannot be documented one way and validated another.
 */
type SettingDeclaration = {
  /** Environment variable; the config-file key is the setting's key. */
  env: string;
  /** A line of the configuration table in docs/administrators.md (Markdown). */
  description: string;
  /** A secret: never printed, nor repeated in an error message. */
  secret?: true;
} & (
  | {
      /** Validation with its default (`.default(...)`): the default is written here only. */
      schema: z.ZodDefault<z.ZodType>;
      /** How the default reads in the docs, when its value alone says too little. */
      defaultText?: string;
    }
  | {
      schema: z.ZodOptional<z.ZodType>;
      /** What leaving it unset means. */
      defaultText: string;
    }
);

/** Every setting of the service, in one place. */
export const SETTINGS = {
  dataDir: {
    env: "IMAGING_DATA_DIR",
    schema: z.string().min(1).default("./data"),
    description: "SQLite store and generated secrets",
  },
  databaseUrl: {
    env: "DATABASE_URL",
    schema: z
      .string()
      .regex(/^postgres(ql)?:\/\//, "a postgres://user:password@host:port/database URL")
      .optional(),
    description: "PostgreSQL store: `postgres://user:pass@host:5432/db`",
    defaultText: "unset (SQLite file DATA_DIR/imaging.db)",
  },
  port: {
    env: "PORT",
    schema: z.coerce.number().int().min(0).max(65535).optional(),
    description: "user access port of the gateway",
    defaultText: "8090 (http), 443 (https)",
  },
  bindAddress: {
    env: "IMAGING_BIND_ADDRESS",
    schema: z.string().min(1).default("0.0.0.0"),
    description: "address the gateway listens on",
  },
  publicUrl: {
    env: "PUBLIC_URL",
    schema: z.string().optional(),
    description: "base_url seen by clients, `http://<gateway-fqdn>:8090`; required on Windows over http",
    defaultText: "derived: http://<fqdn>:8090 or https://<fqdn>",
  },
  tlsCertFile: {
    env: "TLS_CERT_FILE",
    schema: z.string().min(1).optional(),
    description: "PEM certificate chain: enables HTTPS on the gateway",
    defaultText: "unset (http)",
  },
  tlsKeyFile: {
    env: "TLS_KEY_FILE",
    schema: z.string().min(1).optional(),
    description: "PEM private key for `TLS_CERT_FILE`",
    defaultText: "unset",
  },
  restPort: {
    env: "REST_PORT",
    schema: z.coerce.number().int().min(0).max(65535).default(8070),
    description: "internal port of the REST API (0: any free port)",
  },
  internalBindAddress: {
    env: "INTERNAL_BIND_ADDRESS",
    schema: z.string().min(1).default("127.0.0.1"),
    description: "address internal services listen on",
  },
  restUpstreamUrl: {
    env: "REST_UPSTREAM_URL",
    schema: z.url({ protocol: /^https?$/ }).optional(),
    description: "REST API the gateway forwards `/rest` to when it runs elsewhere",
    defaultText: "the in-process REST service",
  },
  mcpAnalysisPort: {
    env: "MCP_ANALYSIS_PORT",
    schema: z.coerce.number().int().min(0).max(65535).default(8282),
    description: "internal port of the analysis MCP server (0: any free port)",
  },
  mcpGatekeeperPort: {
    env: "MCP_GATEKEEPER_PORT",
    schema: z.coerce.number().int().min(0).max(65535).default(8283),
    description: "internal port of the gatekeeper MCP server (0: any free port)",
  },
  mcpAnalysisUpstreamUrl: {
    env: "MCP_ANALYSIS_UPSTREAM_URL",
    schema: z.url({ protocol: /^https?$/ }).optional(),
    description: "analysis MCP server the gateway forwards `/mcp` to when it runs elsewhere",
    defaultText: "the in-process server",
  },
  mcpGatekeeperUpstreamUrl: {
    env: "MCP_GATEKEEPER_UPSTREAM_URL",
    schema: z.url({ protocol: /^https?$/ }).optional(),
    description: "gatekeeper MCP server the gateway forwards `/mcp/gatekeeper` to when it runs elsewhere",
    defaultText: "the in-process server",
  },
  tokenExchangeClientId: {
    env: "TOKEN_EXCHANGE_CLIENT_ID",
    schema: z.string().min(1).default("mcp-token-exchange"),
    description: "confidential client of the token exchange",
  },
  tokenExchangeClientSecret: {
    env: "TOKEN_EXCHANGE_CLIENT_SECRET",
    schema: z.string().min(1).optional(),
    description: "its secret",
    defaultText: "generated, sealed in the store",
    secret: true,
  },
  corsAllowedOrigins: {
    env: "CORS_ALLOWED_ORIGINS",
    schema: z
      .string()
      .regex(
        /^(https?:\/\/[^\s,/]+)(\s*,\s*https?:\/\/[^\s,/]+)*$/,
        "comma-separated origins such as https://app.example.com",
      )
      .optional(),
    description: "extra browser origins allowed on the MCP endpoints (comma-separated)",
    defaultText: "none",
  },
  idpExtraCaFile: {
    env: "IDP_EXTRA_CA_FILE",
    schema: z.string().min(1).optional(),
    description: "extra CAs trusted when fetching client metadata documents",
    defaultText: "system CAs only",
  },
  dynamicClientRegistration: {
    env: "DYNAMIC_CLIENT_REGISTRATION",
    schema: z.enum(["off", "loopback", "trusted-hosts"]).default("off"),
    description:
      '`off`, `loopback` or `trusted-hosts`: dynamic client registration for clients without a metadata document (see "Clients that only register")',
  },
  dynamicClientRegistrationHosts: {
    env: "DYNAMIC_CLIENT_REGISTRATION_HOSTS",
    schema: z
      .string()
      .regex(/^[A-Za-z0-9.-]+(\s*,\s*[A-Za-z0-9.-]+)*$/, "comma-separated host names such as app.example.com")
      .optional(),
    description:
      "hosts whose https redirect URIs registration accepts in `trusted-hosts` mode (comma-separated)",
    defaultText: "none",
  },
  dynamicClientRegistrationMaxClients: {
    env: "DYNAMIC_CLIENT_REGISTRATION_MAX_CLIENTS",
    schema: z.coerce.number().int().min(1).max(100_000).default(200),
    description:
      "`IDP=keycloak` with registration on: the realm's anonymous Max Clients Limit registration policy (Keycloak counts every client of the realm)",
  },
  realm: {
    env: "IDP_REALM",
    schema: z
      .string()
      .regex(/^[A-Za-z0-9_-]+$/, "letters, digits, '-' or '_'")
      .default("imaging"),
    description: "identity provider realm",
  },
  idp: {
    env: "IDP",
    schema: z.enum(["embedded", "keycloak"]).default("embedded"),
    description: "`embedded` or `keycloak` (docs/keycloak.md)",
  },
  keycloakUrl: {
    env: "KEYCLOAK_URL",
    schema: z.url({ protocol: /^https?$/ }).optional(),
    description: "Keycloak as the gateway reaches it, with its relative path: `http://kc:8080/auth`",
    defaultText: "required with IDP=keycloak",
  },
  keycloakRealm: {
    env: "KEYCLOAK_REALM",
    schema: z
      .string()
      .regex(/^[A-Za-z0-9_-]+$/, "letters, digits, '-' or '_'")
      .optional(),
    description: "realm the platform uses (created if missing)",
    defaultText: "IDP_REALM",
  },
  keycloakAdminRealm: {
    env: "KEYCLOAK_ADMIN_REALM",
    schema: z.string().min(1).default("master"),
    description: "realm of the administrator or service account",
  },
  keycloakAdminUsername: {
    env: "KEYCLOAK_ADMIN_USERNAME",
    schema: z.string().min(1).optional(),
    description: "Keycloak administrator (through `admin-cli`)",
    defaultText: "unset",
  },
  keycloakAdminPassword: {
    env: "KEYCLOAK_ADMIN_PASSWORD",
    schema: z.string().min(1).optional(),
    description: "its password",
    defaultText: "unset",
    secret: true,
  },
  keycloakAdminClientId: {
    env: "KEYCLOAK_ADMIN_CLIENT_ID",
    schema: z.string().min(1).optional(),
    description: "or a service account with realm-management rights",
    defaultText: "unset",
  },
  keycloakAdminClientSecret: {
    env: "KEYCLOAK_ADMIN_CLIENT_SECRET",
    schema: z.string().min(1).optional(),
    description: "its secret",
    defaultText: "unset",
    secret: true,
  },
  issuer: {
    env: "IDP_ISSUER",
    schema: z.url({ protocol: /^https?$/ }).optional(),
    description: "issuer of the tokens; the embedded provider runs when it is its own URL",
    defaultText: "{base_url}/auth/realms/{realm}",
  },
  jwksUrl: {
    env: "IDP_JWKS_URL",
    schema: z.url({ protocol: /^https?$/ }).optional(),
    description: "JWKS of the issuer",
    defaultText: "jwks_uri of the issuer's discovery document",
  },
  logLevel: {
    env: "LOG_LEVEL",
    schema: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
    description: "`fatal`..`trace`, `silent`",
  },
  npmRegistryUrl: {
    env: "NPM_REGISTRY_URL",
    schema: z.url({ protocol: /^https?$/ }).default("https://registry.npmjs.org"),
    description: "npm registry (or mirror) the scanner reads package versions and release dates from",
  },
  mavenRepositoryUrl: {
    env: "MAVEN_REPOSITORY_URL",
    schema: z.url({ protocol: /^https?$/ }).default("https://repo.maven.apache.org/maven2"),
    description: "Maven repository (or mirror) for POMs, metadata and artifacts",
  },
  mavenLocalRepository: {
    env: "MAVEN_LOCAL_REPOSITORY",
    schema: z.string().min(1).optional(),
    description: "local Maven repository, read before the remote one",
    defaultText: "~/.m2/repository",
  },
  mavenSearchUrl: {
    env: "MAVEN_SEARCH_URL",
    schema: z
      .union([z.url({ protocol: /^https?$/ }), z.literal("")])
      .default("https://search.maven.org/solrsearch/select"),
    description:
      "SHA-1 search service (Maven Central's search API) naming jars that carry no Maven metadata; each answer is checked against the repository's `.sha1`; empty: none",
  },
  osvMirrorUrl: {
    env: "OSV_MIRROR_URL",
    schema: z.url({ protocol: /^https?$/ }).default("https://osv-vulnerabilities.storage.googleapis.com"),
    description: "where `imaging advisories sync` downloads `<ecosystem>/all.zip`",
  },
  analysisUploadMaxBytes: {
    env: "ANALYSIS_UPLOAD_MAX_BYTES",
    schema: z.coerce
      .number()
      .int()
      .min(1024)
      .default(64 * 1024 * 1024),
    description: "largest analysis document `POST /rest/applications/{name}/analyses` accepts",
    defaultText: "67108864 (64 MiB)",
  },
  shutdownTimeout: {
    env: "SHUTDOWN_TIMEOUT",
    schema: z.coerce.number().positive().max(600).default(5),
    description:
      "seconds `imaging start` has, after SIGTERM or SIGINT, to drain and exit (see [Running it as a service](#running-it-as-a-service))",
  },
  shutdownDrain: {
    env: "SHUTDOWN_DRAIN",
    schema: z.coerce.number().min(0).max(600).default(3),
    description:
      "seconds `imaging start` keeps serving after SIGTERM while `/readyz` answers 503, each answer closing its connection, so that a load balancer takes the replica out before it stops listening (the shipped HAProxy configuration needs at most 1.5 s); then SHUTDOWN_TIMEOUT applies; SIGINT skips it (see [Running it as a service](#running-it-as-a-service))",
  },
  storeWaitTimeout: {
    env: "STORE_WAIT_TIMEOUT",
    schema: z.coerce.number().positive().max(600).default(5),
    description:
      "seconds a request waits for the store before a 503 with Retry-After: PostgreSQL, to connect or for a free connection of the pool (10 per process); SQLite, for the write lock another process holds",
  },
  storeStatementTimeout: {
    env: "STORE_STATEMENT_TIMEOUT",
    schema: z.coerce.number().positive().max(3600).default(30),
    description:
      "PostgreSQL: seconds a statement of the service may run (the server's `statement_timeout`); a server that gives no answer 5 s past it (paused, cut off) has the connection dropped and the request answered 503; migrations and the `imaging` commands have no limit",
  },
  storeReadWorkers: {
    env: "STORE_READ_WORKERS",
    schema: z.coerce.number().int().min(0).max(64).optional(),
    description:
      "SQLite store: worker threads that run the reads, each with its own read-only connection (WAL), below the event loop's CPU priority, so a heavy query never blocks the gateway, identity provider or MCP servers; reads that were slow on average never take the last worker, and short ones go first; writes and transactions stay on one connection; a statement that took under 0.5 ms of CPU on average over 20 runs, and never over 3 ms, runs on the event loop (handing it over would cost more); `0` runs all reads on the event loop",
    defaultText: "one per core (2–8) + 1 when the REST API runs in the process, else `0`",
  },
  secretsKey: {
    env: "IMAGING_SECRETS_KEY",
    schema: z.string().min(1).optional(),
    description:
      "key sealing the secrets kept in the store: 32 random bytes, base64 or hex (`openssl rand -base64 32`); the same on every replica",
    defaultText: "`IMAGING_SECRETS_KEY_FILE`, else generated in `DATA_DIR/secrets/store-secrets-key.secret`",
    secret: true,
  },
  secretsKeyFile: {
    env: "IMAGING_SECRETS_KEY_FILE",
    schema: z.string().min(1).optional(),
    description: "file holding that key (e.g. a mounted Kubernetes secret)",
    defaultText: "unset",
  },
  keyPollInterval: {
    env: "KEY_POLL_INTERVAL",
    schema: z.coerce.number().min(0.1).max(300).default(2),
    description: "seconds between a replica's checks of the store for a signing key rotation",
  },
  metricsPort: {
    env: "METRICS_PORT",
    schema: z.coerce.number().int().min(0).max(65535).optional(),
    description:
      "port of the internal listener serving Prometheus metrics at `/metrics` on `INTERNAL_BIND_ADDRESS` (`0` = any free port); see [Health, metrics and request logs](#health-metrics-and-request-logs)",
    defaultText: "unset (no metrics listener)",
  },
  logFormat: {
    env: "LOG_FORMAT",
    schema: z.enum(["auto", "json", "pretty"]).default("auto"),
    description:
      "`pretty` (human-readable lines), `json` (one JSON object a line) or `auto` (pretty when stdout is a terminal)",
  },
} satisfies Record<string, SettingDeclaration>;

type Declarations = typeof SETTINGS;
export type SettingKey = keyof Declarations;

export const settingsSchema = z.object(
  Object.fromEntries(Object.entries(SETTINGS).map(([key, setting]) => [key, setting.schema])) as {
    [K in SettingKey]: Declarations[K]["schema"];
  },
);

export type Settings = z.infer<typeof settingsSchema>;

/** The declarations as a list, in declaration order (the configuration table's order). */
export const settingList: readonly (SettingDeclaration & { key: SettingKey })[] = Object.entries(
  SETTINGS,
).map(([key, setting]) => ({ key: key as SettingKey, ...(setting as SettingDeclaration) }));

/** Settings whose value is a secret: never printed, nor repeated in an error message. */
export const SECRET_SETTINGS: readonly SettingKey[] = settingList.filter((s) => s.secret).map((s) => s.key);

export const isSecretSetting = (key: string) => (SECRET_SETTINGS as readonly string[]).includes(key);

/** The default as documentation shows it: the declared text, else the schema's default value. */
export function defaultTextOf(setting: SettingDeclaration): string {
  return setting.defaultText ?? String(setting.schema.parse(undefined));
}
