import { lookup } from "node:dns/promises";
import { networkInterfaces } from "node:os";
import * as oauth from "oauth4webapi";
import { ConfigError } from "../config/load-config.ts";
import { type RuntimeConfig, resolveRuntimeConfig } from "../config/runtime-config.ts";
import type { Settings } from "../config/settings.ts";
import { ACCESS_TOKEN_TYPE, TOKEN_EXCHANGE_GRANT } from "../contracts/platform.ts";
import type { CimdClientState, CimdRepository } from "../idp/cimd/repository.ts";
import { registrationEndpointOf } from "../idp/registration/endpoint.ts";
import { type Check, notRun } from "./check.ts";
import { cimdClientChecks, cimdUnavailableCheck, noCimdClientCheck } from "./cimd.ts";
import {
  challengeCheck,
  challengeDef,
  discoveryCheck,
  discoveryDef,
  discoveryProbePaths,
  fixes,
  GATEWAY,
  gatewayCheck,
  JSON_NOT_FOUND,
  jsonNotFoundCheck,
  MCP_ROUTES,
  metadataDef,
  NOT_FOUND_PROBES,
  resourceMetadataCheck,
} from "./gateway.ts";
import { jsonObject, type Observation, probe } from "./http.ts";
import {
  IDP_CIMD,
  type IdpKind,
  idpCimdCheck,
  rebase,
  tokenExchangeCheck,
  tokenExchangeNoSecret,
  tokenExchangeNotRun,
} from "./identity-provider.ts";
import { DYNAMIC_REGISTRATION, registrationCheck } from "./registration.ts";
import { internalBindCheck, isLoopbackAddress, WINDOWS_PUBLIC_URL, windowsPublicUrlCheck } from "./setup.ts";

/** The secret of the exchange client as the gateway uses it, and where it came from; or why there is none. */
export type ExchangeSecret = { secret: string; source: string } | { secret?: undefined; reason: string };

/** What doctor reads besides HTTP: the identity provider's CIMD entries and the exchange secret. */
export interface DoctorSources {
  withCimd<T>(work: (repository: CimdRepository, knownProfiles: string[]) => Promise<T>): Promise<T>;
  exchangeSecret(config: RuntimeConfig): Promise<ExchangeSecret>;
}

interface DoctorInput {
  settings: Settings;
  platform: NodeJS.Platform;
  /** Probe this address instead of base_url (the expected values still come from base_url). */
  url?: string | undefined;
  /** Limit the per-client checks to this CIMD client. */
  client?: string | undefined;
  /** `--local`, as given to `imaging start`: loopback, base_url on localhost unless PUBLIC_URL is set. */
  local?: boolean | undefined;
}

export interface DoctorReport {
  /** base_url as configured, or undefined when it cannot be derived (Windows over http, no PUBLIC_URL). */
  baseUrl: string | undefined;
  /** The address probed: --url, else base_url. */
  probed: string | undefined;
  /** {base_url}/auth/realms/{realm} (or IDP_ISSUER); undefined with base_url. */
  issuer: string | undefined;
  idp: IdpKind;
  checks: Check[];
}

/** `--client` names no CIMD client. */
export class UnknownCimdClientError extends Error {
  override name = "UnknownCimdClientError";
}

const MCP_INITIALIZE = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "imaging-doctor", version: "1" },
  },
});

/** Never a real token: the endpoint's refusal tells whether the client may exchange. */
const BOGUS_SUBJECT_TOKEN = "imaging-doctor-probe-not-a-token";

/** Where a base_url-less Windows installation is checked from; never probed. */
const UNKNOWN_BASE = "http://base-url-unknown.invalid:8090";

async function resolveConfig(
  input: DoctorInput,
  windowsFailed: boolean,
): Promise<{ config: RuntimeConfig; baseKnown: boolean }> {
  const context = { platform: input.platform, local: Boolean(input.local) };
  if (!windowsFailed) return { config: await resolveRuntimeConfig(input.settings, context), baseKnown: true };
  // Windows over http without PUBLIC_URL: the service refuses to start; the other checks still run.
  const publicUrl = input.url ?? UNKNOWN_BASE;
  return {
    config: await resolveRuntimeConfig({ ...input.settings, publicUrl }, context),
    baseKnown: input.url !== undefined,
  };
}

async function cimdChecks(
  sources: DoctorSources,
  input: DoctorInput,
  config: RuntimeConfig,
): Promise<Check[]> {
  const idp: IdpKind = config.idp;
  const context = { idp, realm: config.realm, http: config.baseUrl.startsWith("http:") };
  let location = idp === "keycloak" ? `Keycloak realm ${config.realm}` : "the platform store";
  try {
    return await sources.withCimd(async (repository, knownProfiles) => {
      location = repository.location;
      let states: CimdClientState[];
      if (input.client !== undefined) {
        const state = await repository.getClientState(input.client);
        if (!state)
          throw new UnknownCimdClientError(
            `No CIMD client named ${input.client} in ${repository.location} (see: imaging cimd list)`,
          );
        states = [state];
      } else {
        const clients = await repository.listClients();
        const found = await Promise.all(clients.map((c) => repository.getClientState(c.client)));
        states = found.filter((s): s is CimdClientState => s !== undefined);
      }
      if (states.length === 0) return [noCimdClientCheck(repository.location)];
      return states.flatMap((state) => cimdClientChecks(state, knownProfiles, context));
    });
  } catch (error) {
    if (error instanceof UnknownCimdClientError) throw error;
    if (error instanceof ConfigError) throw error;
    return [cimdUnavailableCheck(location, (error as Error).message ?? String(error), idp)];
  }
}

/**
 * Where a listener bound to loopback cannot be reached but one bound to every interface can: this
 * machine's non-loopback addresses and those of base_url's host. Loopback is never tried: a listener
 * on 127.0.0.1 answers there by design (and a host name may well resolve to it).
 */
async function nonLoopbackAddresses(config: RuntimeConfig): Promise<string[]> {
  const own = Object.values(networkInterfaces())
    .flat()
    .filter((a) => a !== undefined && !a.internal && !(a.family === "IPv6" && a.scopeid))
    .map((a) => a?.address as string);
  const host = URL.parse(config.baseUrl)?.hostname.replace(/^\[|\]$/g, "") ?? "";
  const resolved =
    host === "" || config.baseUrl === UNKNOWN_BASE
      ? []
      : await lookup(host, { all: true }).then(
          (all) => all.map((a) => a.address),
          () => [],
        );
  return [...new Set([...own, ...resolved])].filter((a) => !isLoopbackAddress(a) && !/^::ffff:127\./.test(a));
}

/** Internal listeners that answer at a non-loopback address, i.e. to other machines. */
async function exposedInternals(config: RuntimeConfig): Promise<{ exposed: string[]; probed: string[] }> {
  const paths = [
    !config.restUpstreamUrl && config.restPort > 0 && `${config.restPort}/rest/health`,
    !config.mcpAnalysisUpstreamUrl && config.mcpAnalysisPort > 0 && `${config.mcpAnalysisPort}/healthz`,
    !config.mcpGatekeeperUpstreamUrl && config.mcpGatekeeperPort > 0 && `${config.mcpGatekeeperPort}/healthz`,
  ].filter((p): p is string => typeof p === "string");
  if (paths.length === 0) return { exposed: [], probed: [] };
  const addresses = await nonLoopbackAddresses(config);
  const candidates = addresses.flatMap((address) =>
    paths.map((path) => `http://${address.includes(":") ? `[${address}]` : address}:${path}`),
  );
  const answers = await Promise.all(candidates.map((url) => probe(url, { timeoutMs: 2_000 })));
  return { exposed: answers.filter((a) => a.ok).map((a) => a.url), probed: addresses };
}

/** The client's HTTP Basic credentials (RFC 6749 section 2.3.1 encoding), as oauth4webapi writes them. */
async function basicAuth(clientId: string, secret: string): Promise<string> {
  const headers = new Headers();
  await oauth.ClientSecretBasic(secret)(
    { issuer: "" },
    { client_id: clientId },
    new URLSearchParams(),
    headers,
  );
  return headers.get("authorization") ?? "";
}

/** Normalises --url to an origin, as base_url is. */
export function probeBaseFrom(url: string): string | undefined {
  const parsed = URL.parse(url);
  if (!parsed || (parsed.protocol !== "http:" && parsed.protocol !== "https:")) return undefined;
  if (parsed.pathname !== "/" || parsed.search || parsed.hash || parsed.username) return undefined;
  return parsed.origin;
}

/**
 * Every check, in the order of the specification: setup, the gateway's public contract, the identity
 * provider, each CIMD client, the token exchange, the internal listeners.
 */
export async function runDoctor(input: DoctorInput, sources: DoctorSources): Promise<DoctorReport> {
  const windows = windowsPublicUrlCheck({
    platform: input.platform,
    https: Boolean(input.settings.tlsCertFile),
    publicUrl: input.settings.publicUrl,
    local: Boolean(input.local),
  });
  const { config, baseKnown } = await resolveConfig(input, windows.verdict === "fail");
  const expectedBase = config.baseUrl;
  const probeBase = input.url ?? expectedBase;
  const issuer = config.issuer;
  const idp: IdpKind = config.idp;

  // First, so that an unknown --client is reported before any request is sent.
  const cimd = await cimdChecks(sources, input, config);

  const internals = await exposedInternals(config);
  const internal = internalBindCheck({
    internalBindAddress: config.internalBindAddress,
    upstreams: [
      ["MCP_ANALYSIS_UPSTREAM_URL", config.mcpAnalysisUpstreamUrl],
      ["MCP_GATEKEEPER_UPSTREAM_URL", config.mcpGatekeeperUpstreamUrl],
    ]
      .filter((entry): entry is [string, string] => typeof entry[1] === "string")
      .map(([setting, url]) => ({ setting, url })),
    exposed: internals.exposed,
    probedAddresses: internals.probed,
  });

  if (!baseKnown) {
    const reason = `base_url is unknown (see ${WINDOWS_PUBLIC_URL.id})`;
    const skipped = [
      GATEWAY,
      ...MCP_ROUTES.flatMap((route) => [challengeDef(route), metadataDef(route), discoveryDef(route)]),
      JSON_NOT_FOUND,
      IDP_CIMD,
      DYNAMIC_REGISTRATION,
    ].map((def) => notRun(def, reason, "Set PUBLIC_URL, or give --url."));
    return {
      baseUrl: undefined,
      probed: undefined,
      issuer: undefined,
      idp,
      checks: [
        windows,
        ...skipped,
        ...cimd,
        tokenExchangeNotRun(reason, "Set PUBLIC_URL, or give --url."),
        internal,
      ],
    };
  }

  const at = (path: string) => `${probeBase}${path}`;
  const issuerDocument = `${rebase(issuer, expectedBase, probeBase)}/.well-known/openid-configuration`;
  const [health, challenges, metadata, discoveries, notFound, idpDocument] = await Promise.all([
    probe(at("/mcp/healthcheck")),
    Promise.all(
      MCP_ROUTES.map((route) =>
        probe(at(route.path), {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
          body: MCP_INITIALIZE,
        }),
      ),
    ),
    Promise.all(
      MCP_ROUTES.map((route) =>
        probe(at(`/.well-known/oauth-protected-resource${route.path}`), { follow: true }),
      ),
    ),
    Promise.all(
      MCP_ROUTES.map((route) =>
        Promise.all(
          discoveryProbePaths(route).map(async (path) => ({
            path,
            observation: await probe(at(path), { follow: true }),
          })),
        ),
      ),
    ),
    Promise.all(
      // With registration on, /register leads to the registration endpoint (checked below instead).
      NOT_FOUND_PROBES.filter(
        ({ path }) => path !== "/register" || config.dynamicClientRegistration === "off",
      ).map(async ({ method, path }) => ({
        method,
        path,
        observation: await probe(at(path), {
          method,
          ...(method === "POST" ? { headers: { "content-type": "application/json" }, body: "{}" } : {}),
        }),
      })),
    ),
    probe(issuerDocument, { follow: true }),
  ]);
  const register =
    config.dynamicClientRegistration === "off"
      ? undefined
      : await probe(at("/register"), {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: "{}",
        });

  const exchange = await exchangeCheck(sources, config, idpDocument, expectedBase, probeBase);
  const checks = [
    windows,
    gatewayCheck(health),
    ...MCP_ROUTES.map((route, i) => challengeCheck(route, expectedBase, challenges[i] as Observation)),
    ...MCP_ROUTES.map((route, i) =>
      resourceMetadataCheck(route, expectedBase, issuer, metadata[i] as Observation),
    ),
    ...MCP_ROUTES.map((route, i) => discoveryCheck(route, issuer, discoveries[i] ?? [])),
    jsonNotFoundCheck(notFound),
    idpCimdCheck(idp, idpDocument),
    registrationCheck(
      {
        idp,
        mode: config.dynamicClientRegistration,
        expectedEndpoint: registrationEndpointOf({
          ...config,
          dynamicClientRegistration: "loopback",
        }) as string,
      },
      idpDocument,
      register ?? idpDocument,
    ),
    ...cimd,
    exchange,
    internal,
  ];
  return { baseUrl: expectedBase, probed: probeBase, issuer, idp, checks };
}

async function exchangeCheck(
  sources: DoctorSources,
  config: RuntimeConfig,
  idpDocument: Observation,
  expectedBase: string,
  probeBase: string,
): Promise<Check> {
  const context = { idp: config.idp, clientId: config.tokenExchangeClientId, realm: config.realm };
  const endpoint = jsonObject(idpDocument)?.token_endpoint;
  if (typeof endpoint !== "string")
    return tokenExchangeNotRun(
      `the identity provider's discovery document names no token endpoint (see ${IDP_CIMD.id})`,
      fixes.pointAtGateway,
    );
  const secret = await sources.exchangeSecret(config);
  if (secret.secret === undefined) return tokenExchangeNoSecret(context, secret.reason);
  const observation = await probe(rebase(endpoint, expectedBase, probeBase), {
    method: "POST",
    headers: {
      authorization: await basicAuth(context.clientId, secret.secret),
      "content-type": "application/x-www-form-urlencoded",
      accept: "application/json",
    },
    body: new URLSearchParams({
      grant_type: TOKEN_EXCHANGE_GRANT,
      subject_token: BOGUS_SUBJECT_TOKEN,
      subject_token_type: ACCESS_TOKEN_TYPE,
    }).toString(),
  });
  return tokenExchangeCheck({ ...context, secretSource: secret.source }, observation);
}
