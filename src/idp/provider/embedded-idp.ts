import type { EventEmitter } from "node:events";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { JWK } from "jose";
import type { Kysely } from "kysely";
import { type KoaContextWithOIDC, Provider } from "oidc-provider";
import { OutageLog } from "../../auth/log-limits.ts";
import { createOidcAdapterFactory, purgeExpiredOidcPayloads } from "../../store/oidc-adapter.ts";
import { expireUnusedRegisteredClients } from "../../store/registered-clients.ts";
import type { Database } from "../../store/schema.ts";
import { type SecretVault, serviceSecretVersion } from "../../store/service-secrets.ts";
import { storeThrottleState } from "../../store/sign-in-failures.ts";
import { refusalLog } from "../refusal-log.ts";
import { REGISTRATION_LIMITS } from "../registration/policy.ts";
import { ensureStoredSecret } from "../stored-secrets.ts";
import { type CimdResolver, installCimdClientLookup } from "./cimd-clients.ts";
import { providerConfiguration } from "./configuration.ts";
import { interactionRoutes } from "./interactions.ts";
import { KEY_RETENTION_SECONDS, type RealmDefinition, TOKEN_EXCHANGE_GRANT } from "./realm.ts";
import { markUsedOnTokens, type RegistrationOptions, registrationPolicy } from "./registration.ts";
import { loadSigningKeys, publicJwks, SIGNING_KEYS_SECRET, type StoredSigningKey } from "./signing-keys.ts";
import { SignInThrottle, type ThrottleOptions } from "./throttle.ts";
import { type PendingClaims, TOKEN_EXCHANGE_PARAMETERS, tokenExchangeGrant } from "./token-exchange-grant.ts";

interface EmbeddedIdpOptions {
  realm: RealmDefinition;
  db: Kysely<Database>;
  /** The store's sealed secrets (signing, cookie and CSRF keys). */
  vault: SecretVault;
  /** Where secrets from before the store kept them are imported from, once. */
  dataDir: string;
  /** Secret of the token exchange client (the gateway's exchanger uses the same). */
  exchangeClientSecret: string;
  cimd: CimdResolver;
  throttle?: Partial<ThrottleOptions>;
  /** Dynamic client registration: its policy (mode off: not offered) and rate limit. */
  registration?: Omit<RegistrationOptions, "now">;
  /** How often the store is checked for a key rotation made by any replica (ms). */
  keyWatchIntervalMs?: number;
  log?: (level: "info" | "warn" | "error", message: string) => void;
}

export interface EmbeddedIdp {
  issuer: string;
  /** Path under which the gateway mounts the provider, e.g. /auth/realms/imaging. */
  issuerPath: string;
  /** Node request handler for requests whose path starts with issuerPath. */
  handle(req: IncomingMessage, res: ServerResponse, clientAddress: string): void;
  /** Public keys currently published (current, next, retired). */
  publicJwks(): { keys: JWK[] };
  /** Re-reads the signing keys from the store (done automatically when a rotation changes them). */
  reloadKeys(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The embedded identity provider: oidc-provider configured for this platform, its state in the
 * platform store, its signing keys and secrets sealed in the store too (so replicas are
 * interchangeable), users from the store, CIMD clients through our policy engine, and the token
 * exchange grant. The gateway mounts `handle` at the issuer's path.
 */
export async function createEmbeddedIdp(options: EmbeddedIdpOptions): Promise<EmbeddedIdp> {
  const { realm } = options;
  const issuerUrl = new URL(realm.issuer);
  const issuerPath = issuerUrl.pathname.replace(/\/$/, "");
  const base = new URL(realm.baseUrl);
  const secureCookies = base.protocol === "https:";
  const adapter = createOidcAdapterFactory(options.db);
  const cookieKey = await ensureStoredSecret(options.vault, "idp-cookie-key", options.dataDir);
  const csrfKey = await ensureStoredSecret(options.vault, "idp-csrf-key", options.dataDir);
  const throttleState = storeThrottleState(options.db);
  const throttle = new SignInThrottle({ state: throttleState, ...options.throttle });
  const pendingClaims: PendingClaims = new WeakMap();
  const log = options.log ?? (() => {});
  // Why a client could not sign in or register, for the administrator (rate-limited).
  const onRefused = refusalLog((message) => log("info", message));
  // A failing dependency (the store, mostly) fails every request alike: its cause is logged once.
  const outage = new OutageLog({
    down: (cause, failures) =>
      log(
        "error",
        failures === 1
          ? `identity provider cannot serve requests: ${cause} (answering 503 until it can)`
          : `identity provider still cannot serve requests: ${cause} (${failures} requests refused so far)`,
      ),
    up: (failures) => log("warn", `identity provider serves requests again (${failures} got 503 meanwhile)`),
  });
  const registration = options.registration?.policy.mode === "off" ? undefined : options.registration;
  // One registration gate (and rate limit), whatever the rebuilds of the provider (key rotation).
  const registrationMiddleware = registration
    ? registrationPolicy(options.db, { onRefused, ...registration })
    : undefined;

  const loaded = await loadSigningKeys(options.vault, KEY_RETENTION_SECONDS, { importFrom: options.dataDir });
  let keys: StoredSigningKey[] = loaded.keys;
  let keysVersion = loaded.version;
  let published = publicJwks(keys);

  const build = (): { provider: Provider; callback: ReturnType<Provider["callback"]> } => {
    const provider = new Provider(
      realm.issuer,
      providerConfiguration({
        realm,
        issuerPath,
        db: options.db,
        adapter,
        keys,
        cookieKeys: [cookieKey],
        secureCookies,
        exchangeClientSecret: options.exchangeClientSecret,
        pendingClaims,
        registration: registration !== undefined,
      }),
    );
    // Behind the gateway: protocol, host and client address come from the X-Forwarded-* headers the
    // mount sets from base_url and the connection (never from the client).
    provider.proxy = true;
    installCimdClientLookup(provider, options.cimd, onRefused);
    provider.registerGrantType(
      TOKEN_EXCHANGE_GRANT,
      tokenExchangeGrant(provider, {
        realm,
        db: options.db,
        publicKeys: () => published,
        pendingClaims,
      }),
      TOKEN_EXCHANGE_PARAMETERS,
      ["audience", "resource"],
    );
    provider.use(finishing(realm, outage));
    if (registrationMiddleware) {
      provider.use(registrationMiddleware);
      provider.on(
        "grant.success",
        markUsedOnTokens(options.db, (message) => log("warn", message)),
      );
    }
    provider.use(
      interactionRoutes(provider, {
        db: options.db,
        issuerPath,
        ownOrigin: base.origin,
        secureCookies,
        csrfKey,
        throttle,
      }),
    );
    provider.on("server_error", (_ctx: unknown, error: unknown) =>
      outage.failed((error as Error)?.message ?? String(error)),
    );
    // Koa's own "error" event (Provider extends Koa): the typings' event map lists only the provider's.
    (provider as EventEmitter).on("error", (error: unknown) =>
      log("error", `identity provider error: ${(error as Error)?.message ?? String(error)}`),
    );
    return { provider, callback: provider.callback() };
  };

  let current = build();

  const reloadKeys = async () => {
    const reloaded = await loadSigningKeys(options.vault, KEY_RETENTION_SECONDS);
    keys = reloaded.keys;
    keysVersion = reloaded.version;
    published = publicJwks(keys);
    current = build();
  };

  // A rotation on any replica (or by `imaging idp rotate-keys`) bumps the stored keys' version: one
  // indexed read per interval tells every replica, so all publish and sign alike within that delay.
  let polling = false;
  // A store outage fails every poll: said once when it starts (and if its reason changes), and once when over.
  let pollFailure: string | undefined;
  const pollKeys = async () => {
    if (polling) return;
    polling = true;
    try {
      const version = await serviceSecretVersion(options.db, SIGNING_KEYS_SECRET);
      if (version !== undefined && version !== keysVersion) await reloadKeys();
      if (pollFailure !== undefined) log("warn", "signing keys polled from the store again");
      pollFailure = undefined;
    } catch (error) {
      const reason = (error as Error).message;
      if (reason !== pollFailure) {
        log("warn", `signing keys not polled from the store (the current ones stay in use): ${reason}`);
      }
      pollFailure = reason;
    } finally {
      polling = false;
    }
  };
  const keyPoll = setInterval(() => void pollKeys(), options.keyWatchIntervalMs ?? 2_000);
  keyPoll.unref();

  const purgeExpired = () =>
    Promise.all([
      purgeExpiredOidcPayloads(options.db),
      expireUnusedRegisteredClients(options.db, REGISTRATION_LIMITS.unusedClientTtlSeconds),
      throttleState.purge(Date.now(), 24 * 3600_000),
    ]).catch((error: unknown) =>
      log("warn", `expired sign-in state not purged: ${(error as Error).message}`),
    );
  void purgeExpired();
  const purge = setInterval(purgeExpired, 10 * 60_000);
  purge.unref();

  const forwardedProto = base.protocol.replace(":", "");
  return {
    issuer: realm.issuer,
    issuerPath,
    handle(req, res, clientAddress) {
      const original = req.url ?? "/";
      let rest = original.slice(issuerPath.length);
      if (!rest.startsWith("/")) rest = `/${rest}`;
      (req as IncomingMessage & { originalUrl?: string }).originalUrl = original;
      req.url = rest;
      req.headers["x-forwarded-proto"] = forwardedProto;
      req.headers["x-forwarded-host"] = base.host;
      req.headers["x-forwarded-for"] = clientAddress;
      void current.callback(req, res);
    },
    publicJwks: () => published,
    reloadKeys,
    async close() {
      clearInterval(keyPoll);
      clearInterval(purge);
    },
  };
}

const RETRY_AFTER_SECONDS = "5";

/**
 * Post-processing of the provider's answers: the `mcp:*` scopes listed in discovery (they are
 * resource scopes, so the provider does not list them itself), JSON instead of Koa's plain-text
 * 404 for unknown paths (clients parse what they get at well-known URLs), and a retryable 503 instead
 * of a 500 when the provider fails (its store unreachable), its cause logged once.
 */
function finishing(realm: RealmDefinition, outage: OutageLog) {
  return async (ctx: KoaContextWithOIDC, next: () => Promise<void>) => {
    try {
      await next();
    } catch (error) {
      // HTTP errors (an expired interaction: 400) are answers; only failures become 503.
      const status = (error as { status?: unknown }).status;
      if (typeof status === "number" && status < 500) throw error;
      outage.failed((error as Error)?.message ?? String(error));
      ctx.status = 500;
    }
    if (ctx.status === 500) {
      // The provider's own failure (its store unreachable...): a retryable 503 that names nothing internal.
      ctx.status = 503;
      ctx.set("retry-after", RETRY_AFTER_SECONDS);
      ctx.set("cache-control", "no-store");
      if (typeof ctx.body !== "string") {
        ctx.type = "application/json";
        ctx.body = {
          error: "temporarily_unavailable",
          error_description:
            "The identity provider cannot serve this request right now; try again in a few seconds.",
        };
      }
      return;
    }
    outage.answered();
    const route = (ctx as { oidc?: { route?: string } }).oidc?.route;
    if (route === "discovery" && ctx.body && typeof ctx.body === "object") {
      const body = ctx.body as { scopes_supported?: string[] };
      body.scopes_supported = [...new Set([...(body.scopes_supported ?? []), ...realm.mcpScopes])];
    }
    if (ctx.status === 404 && ctx.body === undefined) {
      ctx.status = 404;
      ctx.type = "application/json";
      ctx.body = {
        error: "not_found",
        error_description: `Nothing is published at ${ctx.path} on this issuer`,
      };
    }
  };
}
