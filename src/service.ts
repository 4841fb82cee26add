import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import { backchannelFetch, issuerMetadata } from "./auth/issuer-metadata.ts";
import { createJwtVerifier } from "./auth/jwt-verifier.ts";
import { createMcpAccessVerifier } from "./auth/mcp-access.ts";
import {
  createTokenExchanger,
  type TokenExchanger,
  TokenExchangeUnavailableError,
} from "./auth/token-exchange.ts";
import { listenUrl } from "./config/listen-url.ts";
import { ConfigError } from "./config/load-config.ts";
import { isPrettyLog, loggerOptions, redactText } from "./config/logging.ts";
import type { RuntimeConfig } from "./config/runtime-config.ts";
import { MCP_ROUTES, MCP_SERVER_NAMES, PLATFORM_AUDIENCE } from "./contracts/platform.ts";
import { buildGateway } from "./gateway/app.ts";
import { loadConsoleBuild } from "./gateway/console/assets.ts";
import { keycloakProxy } from "./gateway/keycloak-proxy.ts";
import type { McpDirectEntry, McpResource } from "./gateway/mcp-resources.ts";
import { keycloakAdministration, storeAdministration } from "./idp/administration.ts";
import { connectKeycloakAdmin, PROVISIONING_REQUEST_TIMEOUT_MS } from "./idp/keycloak/admin.ts";
import { describeAdminFailure } from "./idp/keycloak/errors.ts";
import { type ProvisionResult, provisionKeycloak } from "./idp/keycloak/provision.ts";
import { keepRegisteredClients } from "./idp/keycloak/registered-clients-expiry.ts";
import { inProcessProviderFetch } from "./idp/provider/backchannel.ts";
import type { EmbeddedIdp } from "./idp/provider/embedded-idp.ts";
import {
  type EmbeddedIdpStartOptions,
  identityProviderRoutes,
  startEmbeddedIdp,
  usesEmbeddedIdp,
} from "./idp/provider/index.ts";
import { refusalLog } from "./idp/refusal-log.ts";
import { registrationEndpointOf, registrationPolicyOf } from "./idp/registration/endpoint.ts";
import { createRegistrationGate } from "./idp/registration/gate.ts";
import { secretVault } from "./idp/secrets-key.ts";
import { readStoredSecret } from "./idp/stored-secrets.ts";
import { startMcpService } from "./mcp/http-service.ts";
import { draining as drainingGauge } from "./observability/metrics.ts";
import { createMetricsServer } from "./observability/metrics-listener.ts";
import { buildRestApp } from "./rest/app.ts";
import type { FactsWorker } from "./scanner/facts/background.ts";
import { createRegistryFetcher } from "./scanner/registry/cached-fetch.ts";
import { statusSources } from "./service-status.ts";
import { drainListener, ShutdownSequence, type StopStep, trackConnections } from "./shutdown.ts";
import { openStore, type StoreHandle } from "./store/database.ts";
import { secureDataDirectory } from "./store/file-modes.ts";
import { pingStore } from "./store/ping.ts";
import { storeRegistrationCounts } from "./store/registration-counts.ts";
import { VERSION } from "./version.ts";

export const PARTS = ["gateway", "rest", "mcp-analysis", "mcp-gatekeeper"] as const;
export type Part = (typeof PARTS)[number];

export interface RunningService {
  config: RuntimeConfig;
  /** The internal metrics listener (`GET /metrics`), when METRICS_PORT is set. */
  metricsUrl: string | undefined;
  /** Present when the REST API runs in this process. */
  store: StoreHandle;
  /** Where each part actually listens (useful with port 0). */
  gatewayUrl: string;
  restUrl: string;
  mcpUrls: { analysis: string; gatekeeper: string };
  exchanger: TokenExchanger | undefined;
  /** When the embedded identity provider created the `admin` user at this start (password if generated). */
  admin: { created: boolean; generatedPassword?: string } | undefined;
  /** What the start-up provisioning of Keycloak did (IDP=keycloak, gateway part). */
  keycloak: Omit<ProvisionResult, "exchangeClientSecret"> | undefined;
  /**
   * The graceful stop (SIGTERM/SIGINT): every listener stops accepting, in-flight requests finish, open
   * event streams and upstream connections close, then the store; whatever is left when `timeoutMs`
   * (default SHUTDOWN_TIMEOUT) is nearly over is cut. Later calls return the same promise.
   */
  stop(timeoutMs?: number): Promise<void>;
  /** How long each step of the stop took (filled as it runs). */
  stopDurations: readonly { name: string; ms: number }[];
  /**
   * The drain before a stop (SIGTERM): from now on `/readyz` answers 503 and every answer closes its
   * connection, while requests are still served; resolves after `ms`, when the load balancer has taken
   * the replica out. `stop()` follows.
   */
  drain(ms: number): Promise<void>;
}

/**
 * Uploaded analyses name packages the platform may know nothing about: their facts are looked up in the
 * configured registries (through the on-disk cache under `<data dir>/cache/http`), in the background
 * (scanner/facts/background.ts), from the queue the uploads fill in the store.
 */
async function startFactsLookups(config: RuntimeConfig, store: StoreHandle): Promise<FactsWorker> {
  // The registries' readers (Maven XML, npm) load here, with the REST API, not with every command.
  const { startFactsWorker } = await import("./scanner/facts/background.ts");
  return startFactsWorker(store.db, {
    fetcher: createRegistryFetcher({ cacheDir: join(config.dataDir, "cache", "http"), offline: false }),
    npmRegistryUrl: config.npmRegistryUrl,
    mavenRepositoryUrl: config.mavenRepositoryUrl,
    log: config.logLevel === "silent" ? undefined : (message) => process.stderr.write(`[facts] ${message}\n`),
  });
}

/** A running part and how it stops. */
interface StartedPart {
  name: string;
  stop: StopStep;
}

/** A Fastify listener's stop: Fastify's close (new requests 503, preClose hooks, close), drained. */
const stopApp = (app: FastifyInstance): StopStep => {
  const sockets = trackConnections(app.server);
  return (deadline) => drainListener(app.server, app.close(), deadline, sockets);
};

/**
 * Composition root. By default every part runs here: the REST API, both MCP servers on their internal
 * ports, and the gateway on the public port. `only` runs a subset; the others are then reached at
 * their configured upstream URLs.
 */
export async function startService(
  config: RuntimeConfig,
  hooks: {
    beforeListen?: (store: StoreHandle) => Promise<void>;
    only?: readonly Part[];
    /** Options of the embedded identity provider (runs with the gateway when IDP_ISSUER is its own URL). */
    idp?: EmbeddedIdpStartOptions;
  } = {},
): Promise<RunningService> {
  const parts = new Set<Part>(hooks.only && hooks.only.length > 0 ? hooks.only : PARTS);
  // The data directory holds the generated secrets with either store: 0700 (src/store/file-modes.ts).
  const tightened = secureDataDirectory(config.dataDir);
  const store = await openStore({
    databaseUrl: config.databaseUrl,
    sqliteFile: config.sqliteFile,
    // The read workers serve the REST API's heavy reads. Without it here (`--only gateway`...), the reads
    // are short lookups (users, OIDC records, CIMD policies) and each worker would cost ~18 MB of resident
    // memory for nothing (docs/benchmarks.md, "Memory of the gateway with the embedded identity provider").
    readWorkers: config.storeReadWorkers ?? (parts.has("rest") ? undefined : 0),
    waitTimeoutMs: config.storeWaitTimeout * 1000,
    statementTimeoutMs: config.storeStatementTimeout * 1000,
    notify: (line) => {
      if (config.logLevel !== "silent") process.stderr.write(`[store] ${line}\n`);
    },
  });
  let draining = false;
  if (config.logLevel !== "silent") {
    for (const notice of [...tightened, ...store.notices]) process.stderr.write(`[store] ${notice}\n`);
    if (store.migrated.length > 0) {
      process.stderr.write(`[store] applied migrations: ${store.migrated.join(", ")}\n`);
    }
  }
  const started: StartedPart[] = [];
  const logger = config.logLevel === "silent" ? false : loggerOptions(config.logLevel, config.logFormat);
  const quietHealthChecks = isPrettyLog(config.logFormat);
  const internal = (port: number) =>
    `http://${config.internalBindAddress === "0.0.0.0" ? "127.0.0.1" : config.internalBindAddress}:${port}`;
  try {
    await hooks.beforeListen?.(store);
    // With Keycloak, the gateway reaches the issuer's endpoints at KEYCLOAK_URL, not through itself.
    // The embedded provider runs in this process's gateway: its keys and token endpoint are reached in
    // this process (idp/provider/backchannel.ts), not through base_url, which behind a load balancer
    // would queue the key fetch behind the very requests waiting for it (and reach another replica), nor
    // through the gateway's own listener, which a graceful stop closes while requests still need them.
    let ownIdp: EmbeddedIdp | undefined;
    const ownProvider: typeof fetch = (input, init) =>
      ownIdp ? inProcessProviderFetch(`${config.baseUrl}/auth`, ownIdp)(input, init) : fetch(input, init);
    const metadata = issuerMetadata(
      config.issuer,
      undefined,
      config.idp === "keycloak" && config.keycloakUrl
        ? backchannelFetch(`${config.baseUrl}/auth`, config.keycloakUrl)
        : usesEmbeddedIdp(config) && parts.has("gateway")
          ? ownProvider
          : fetch,
    );
    const jwt = createJwtVerifier({ issuer: config.issuer, jwksUrl: config.jwksUrl, metadata });

    let metricsUrl: string | undefined;
    if (config.metricsPort !== undefined) {
      const server = createMetricsServer();
      await new Promise<void>((resolve, reject) => {
        server.once("error", (error) =>
          reject(
            explainListenError(
              error,
              config.internalBindAddress,
              config.metricsPort as number,
              "METRICS_PORT",
            ),
          ),
        );
        server.listen(config.metricsPort, config.internalBindAddress, () => resolve());
      });
      const sockets = trackConnections(server);
      started.push({
        name: "metrics listener",
        stop: (deadline) =>
          drainListener(server, new Promise((r) => server.close(() => r(undefined))), deadline, sockets),
      });
      metricsUrl = `${listenUrl(server.address())}/metrics`;
    }

    let restUrl = config.restUpstreamUrl ?? internal(config.restPort);
    let gatewayUrl = "";
    let knownExchangeSecret: string | undefined;
    let restApp: FastifyInstance | undefined;
    if (parts.has("rest")) {
      const facts = await startFactsLookups(config, store);
      started.push({ name: "package facts lookups", stop: () => facts.stop() });
      const rest = await buildRestApp({
        db: store.db,
        verifier: jwt,
        version: VERSION,
        logger,
        quietHealthChecks,
        analyses: { maxBytes: config.analysisUploadMaxBytes, onFactsQueued: () => facts.wake() },
        identity:
          config.idp === "keycloak" && config.keycloakUrl
            ? keycloakAdministration({ ...config, keycloakUrl: config.keycloakUrl })
            : storeAdministration(store.db),
        status: statusSources(config, store, metadata, VERSION, {
          gatewayUrl: () => gatewayUrl,
          mcpUrls: () => mcpUrls,
          exchangeSecret: () => knownExchangeSecret,
        }),
      });
      await listenOrExplain(rest, config.internalBindAddress, config.restPort, "REST_PORT");
      started.push({ name: "REST API", stop: stopApp(rest) });
      restUrl = listenUrl(rest.server.address());
      restApp = rest;
    }

    const mcpUrls = {
      analysis: config.mcpAnalysisUpstreamUrl ?? internal(config.mcpAnalysisPort),
      gatekeeper: config.mcpGatekeeperUpstreamUrl ?? internal(config.mcpGatekeeperPort),
    };
    // The MCP servers of this process: the gateway hands them its checked requests in-process.
    const mcpEntries: Partial<Record<McpResource["kind"], McpDirectEntry>> = {};
    for (const kind of ["analysis", "gatekeeper"] as const) {
      if (!parts.has(`mcp-${kind}`)) continue;
      const port = kind === "analysis" ? config.mcpAnalysisPort : config.mcpGatekeeperPort;
      // With the REST API in this process, the tools call it in-process (same authentication, no loopback).
      const mcp = await startMcpService({
        kind,
        host: config.internalBindAddress,
        port,
        restUrl,
        ...(restApp ? { restApp } : {}),
      }).catch((error) => {
        throw explainListenError(
          error,
          config.internalBindAddress,
          port,
          kind === "analysis" ? "MCP_ANALYSIS_PORT" : "MCP_GATEKEEPER_PORT",
        );
      });
      started.push({ name: `${kind} MCP server`, stop: (deadline) => mcp.close(deadline) });
      mcpUrls[kind] = mcp.url;
      mcpEntries[kind] = mcp.serve;
    }

    let exchanger: TokenExchanger | undefined;
    let admin: RunningService["admin"];
    let keycloak: RunningService["keycloak"];
    if (parts.has("gateway")) {
      let identityProvider: ((scope: FastifyInstance) => Promise<void>) | undefined;
      let exchangeSecret: string | undefined;
      if (config.idp === "keycloak") {
        const provisioned = await provisionKeycloakAtStart(config);
        exchangeSecret = provisioned.exchangeClientSecret;
        knownExchangeSecret = exchangeSecret;
        keycloak = {
          changes: provisioned.changes,
          warnings: provisioned.warnings,
          cimdSupported: provisioned.cimdSupported,
        };
        const keeper =
          config.dynamicClientRegistration === "off"
            ? undefined
            : keepRegisteredClients(await connectKeycloakAdmin(config), config.realm, (message) => {
                if (config.logLevel !== "silent") process.stderr.write(`[keycloak] ${redactText(message)}\n`);
              });
        if (keeper) started.push({ name: "registered clients expiry", stop: () => keeper.close() });
        identityProvider = keycloakProxy({
          baseUrl: config.baseUrl,
          keycloakUrl: config.keycloakUrl as string,
          registrationGate:
            config.dynamicClientRegistration === "off"
              ? undefined
              : createRegistrationGate({
                  policy: registrationPolicyOf(config),
                  // Counted in the store: every replica counts the same registrations.
                  counts: storeRegistrationCounts(store.db),
                  onRefused: refusalLog((message) => {
                    if (logsInfo(config.logLevel))
                      process.stderr.write(`[keycloak info] ${redactText(message)}\n`);
                  }),
                  ...hooks.idp?.registration,
                }),
          onRegistered: keeper?.onRegistered,
        });
      } else if (usesEmbeddedIdp(config)) {
        const log = (level: string, message: string) => {
          if (level === "info" && !logsInfo(config.logLevel)) return;
          process.stderr.write(`[idp ${level}] ${redactText(message)}\n`);
        };
        const embedded = await startEmbeddedIdp(config, store.db, {
          ...(config.logLevel === "silent" ? {} : { log }),
          ...(config.idpExtraCaFile ? { cimdCa: readExtraCa(config.idpExtraCaFile) } : {}),
          ...hooks.idp,
        });
        started.push({ name: "identity provider", stop: () => embedded.idp.close() });
        ownIdp = embedded.idp;
        identityProvider = identityProviderRoutes(embedded.idp);
        admin = embedded.admin;
        exchangeSecret = embedded.exchangeClientSecret;
      }
      exchanger = await createExchanger(config, metadata, store.db, exchangeSecret);
      const resources: McpResource[] = [
        {
          kind: "analysis",
          path: MCP_ROUTES.analysis,
          name: MCP_SERVER_NAMES.analysis,
          upstreamUrl: mcpUrls.analysis,
          direct: mcpEntries.analysis,
        },
        {
          kind: "gatekeeper",
          path: MCP_ROUTES.gatekeeper,
          name: MCP_SERVER_NAMES.gatekeeper,
          upstreamUrl: mcpUrls.gatekeeper,
          direct: mcpEntries.gatekeeper,
        },
      ];
      const gateway = await buildGateway({
        baseUrl: config.baseUrl,
        issuer: config.issuer,
        restUpstreamUrl: restUrl,
        // With the REST API in this process, it answers `/rest` on the gateway's connection directly.
        restApp,
        restBodyLimit: config.analysisUploadMaxBytes,
        mcp: {
          resources,
          access: createMcpAccessVerifier(jwt),
          exchanger,
          allowedOrigins: (config.corsAllowedOrigins ?? "")
            .split(",")
            .map((o) => o.trim())
            .filter(Boolean),
        },
        version: VERSION,
        registrationEndpoint:
          config.idp === "keycloak" || usesEmbeddedIdp(config) ? registrationEndpointOf(config) : undefined,
        identityProvider,
        console:
          config.idp === "keycloak" || usesEmbeddedIdp(config)
            ? {
                idp: config.idp === "keycloak" ? "keycloak" : "embedded",
                db: store.db,
                metadata,
                exchanger,
                build: loadConsoleBuild(),
                mcpResource: `${config.baseUrl}/mcp`,
              }
            : undefined,
        https: config.https
          ? {
              cert: readFileSync(config.tlsCertFile as string),
              key: readFileSync(config.tlsKeyFile as string),
            }
          : undefined,
        readiness: {
          store: () => {
            const state = store.availability();
            return state.available ? pingStore(store.db) : state.reason;
          },
        },
        storeAvailability: () => store.availability(),
        draining: () => draining,
        logger,
        quietHealthChecks,
      });
      await listenOrExplain(gateway, config.bindAddress, config.port, "PORT (or --port)");
      started.push({ name: "gateway", stop: stopApp(gateway) });
      gatewayUrl = listenUrl(gateway.server.address(), config.https ? "https" : "http");
    }

    // The stop order: the gateway first (it calls the others), then the identity provider, the MCP servers
    // (their tools call the REST API), the REST API, and the store last. Store-level resources that the
    // parts use (reader pools...) join just before the store.
    const shutdown = new ShutdownSequence();
    for (const part of [...started].reverse()) shutdown.add(part.name, part.stop);
    shutdown.add("store", () => store.close());
    const stop = (timeoutMs = config.shutdownTimeout * 1000) =>
      // Draining gets most of the time; cutting what is left and closing the store, the rest.
      shutdown.run(Date.now() + Math.max(timeoutMs - 500, timeoutMs * 0.8));
    return {
      config,
      metricsUrl,
      store,
      gatewayUrl,
      restUrl,
      mcpUrls,
      exchanger,
      admin,
      keycloak,
      stop,
      stopDurations: shutdown.durations,
      async drain(ms) {
        draining = true;
        drainingGauge.set(1);
        await new Promise((resolve) => setTimeout(resolve, ms));
      },
    };
  } catch (error) {
    for (const part of started.reverse()) await part.stop(Date.now());
    await store.close();
    throw error;
  }
}

/**
 * Keycloak's share of "created automatically at start-up" (src/idp/keycloak/provision.ts). What it
 * changed and what it could not decide go to the log; a Keycloak that cannot be administered stops the
 * start with a sentence naming the setting to check.
 */
async function provisionKeycloakAtStart(config: RuntimeConfig): Promise<ProvisionResult> {
  const admin = await connectKeycloakAdmin(config, { timeoutMs: PROVISIONING_REQUEST_TIMEOUT_MS });
  let result: ProvisionResult;
  try {
    result = await provisionKeycloak(admin, {
      realm: config.realm,
      baseUrl: config.baseUrl,
      exchangeClientId: config.tokenExchangeClientId,
      exchangeClientSecret: config.tokenExchangeClientSecret,
      keycloakUrl: config.keycloakUrl as string,
      registration: registrationPolicyOf(config),
    });
  } catch (error) {
    throw new ConfigError(
      `Provisioning Keycloak realm ${config.realm} at ${config.keycloakUrl} failed: ${describeAdminFailure(error, "Keycloak", config.realm) ?? (error as Error).message}`,
    );
  }
  if (config.logLevel !== "silent") {
    for (const change of result.changes) process.stderr.write(`[keycloak] created or corrected: ${change}\n`);
    for (const warning of result.warnings) process.stderr.write(`[keycloak] warning: ${warning}\n`);
  }
  return result;
}

/**
 * The confidential client's secret: from Keycloak, configured, or generated by the embedded provider
 * into the store (a gateway whose provider runs in another process reads it there: same store).
 */
async function createExchanger(
  config: RuntimeConfig,
  metadata: ReturnType<typeof issuerMetadata>,
  db: StoreHandle["db"],
  fromIdp?: string,
): Promise<TokenExchanger> {
  let secret = fromIdp ?? config.tokenExchangeClientSecret;
  let problem = `no secret is configured for ${config.tokenExchangeClientId} (TOKEN_EXCHANGE_CLIENT_SECRET, or the store's, written by the embedded identity provider's first start)`;
  try {
    secret ??= await readStoredSecret(secretVault(db, config), config.tokenExchangeClientId);
  } catch (error) {
    problem = (error as Error).message;
  }
  if (!secret) {
    const missing = new TokenExchangeUnavailableError(problem);
    return { requests: 0, exchange: () => Promise.reject(missing) };
  }
  return createTokenExchanger({
    metadata,
    clientId: config.tokenExchangeClientId,
    clientSecret: secret,
    audience: PLATFORM_AUDIENCE,
  });
}

/** The operator's extra CA bundle for fetching client metadata documents (internal PKI). */
function readExtraCa(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (error) {
    throw new ConfigError(`IDP_EXTRA_CA_FILE: cannot read ${file}: ${(error as Error).message}`);
  }
}

function explainListenError(error: unknown, host: string, port: number, setting: string): Error {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "EADDRINUSE") {
    return new ConfigError(
      `Port ${port} on ${host} is already in use: stop the other process or change ${setting}`,
    );
  }
  if (code === "EACCES") {
    return new ConfigError(
      `Not allowed to listen on port ${port}: use a port above 1023 or grant the right; see ${setting}`,
    );
  }
  if (code === "EADDRNOTAVAIL") return new ConfigError(`Address ${host} is not an address of this machine`);
  return error as Error;
}

/** Turns the usual listen failures into a sentence naming the setting to change. */
async function listenOrExplain(
  app: FastifyInstance,
  host: string,
  port: number,
  setting: string,
): Promise<void> {
  try {
    await app.listen({ host, port });
  } catch (error) {
    throw explainListenError(error, host, port, setting);
  }
}

/** Whether LOG_LEVEL lets info lines through (the identity provider's own lines go to stderr). */
function logsInfo(level: string): boolean {
  return level === "info" || level === "debug" || level === "trace";
}
