import { createHash } from "node:crypto";
import { type Client, type ClientMetadata, errors, type KoaContextWithOIDC, Provider } from "oidc-provider";
import { BoundedCache } from "../../auth/bounded-cache.ts";
import { cimdRefusals } from "../../observability/metrics.ts";
import { isLoopbackHost } from "../cimd/model.ts";
import { redirectUriMatches } from "../cimd/redirect.ts";
import type { CimdContext, CimdResolution } from "../cimd/resolve.ts";
import { type RefusalReporter, ruleOf } from "../refusal-log.ts";

/** Resolves a URL client_id with our policy engine (src/idp/cimd): injected, so tests can stand in. */
export type CimdResolver = (clientId: string, redirectUri: string | undefined) => Promise<CimdResolution>;

export function cimdResolver(
  resolve: (clientId: string, context: CimdContext) => Promise<CimdResolution>,
  context: Omit<CimdContext, "redirectUri">,
): CimdResolver {
  return (clientId, redirectUri) => resolve(clientId, { ...context, redirectUri });
}

/** A client_id that names a client metadata document (http only passes if a profile allows it). */
export const isUrlClientId = (id: string) => /^https?:\/\//i.test(id);

const SUPPORTED_GRANTS = new Set(["authorization_code", "refresh_token"]);

/**
 * The provider's view of an accepted document: a public client (no secret), authorization code only
 * (plus refresh tokens if the document does not exclude them), `native` when its redirect URIs are
 * loopback ones (RFC 8252), else `web`. Document fields the provider would act on but we do not
 * support (scope restrictions, jwks, logos shown from third-party hosts) are left out.
 */
function providerMetadata(document: Record<string, unknown>, applicationType: "native" | "web") {
  const grants = Array.isArray(document.grant_types)
    ? document.grant_types.filter((g): g is string => typeof g === "string" && SUPPORTED_GRANTS.has(g))
    : ["authorization_code", "refresh_token"];
  if (!grants.includes("authorization_code")) grants.unshift("authorization_code");
  const metadata: Record<string, unknown> & { client_id: string } = {
    client_id: String(document.client_id),
    redirect_uris: document.redirect_uris,
    grant_types: grants,
    response_types: ["code"],
    token_endpoint_auth_method: "none",
    application_type: applicationType,
  };
  if (typeof document.client_name === "string" && document.client_name.trim() !== "") {
    metadata.client_name = document.client_name.trim().slice(0, 200);
  }
  if (typeof document.client_uri === "string" && document.client_uri.startsWith("https://")) {
    metadata.client_uri = document.client_uri;
  }
  return metadata;
}

function preferredApplicationType(redirectUris: readonly string[]): "native" | "web" {
  const parsed = redirectUris.map((u) => URL.parse(u));
  const loopback = parsed.some((u) => u?.protocol === "http:" && isLoopbackHost(u.hostname));
  const otherHttp = parsed.some((u) => u?.protocol === "http:" && !isLoopbackHost(u.hostname));
  return loopback && !otherHttp ? "native" : "web";
}

/**
 * Makes `provider.Client.find` resolve URL client_ids through our CIMD policy engine (the built-in
 * CIMD of oidc-provider is https-only and knows nothing of profiles and policies). Other ids go to the
 * provider's own lookup (static clients). A refusal becomes an OAuth error whose description names
 * the rule; at the authorization endpoint the provider shows it on its error page, since a redirect
 * to an unverified client is not trusted. Redirect URIs match with the engine's rule (loopback: any
 * port) whatever the application type.
 */
export function installCimdClientLookup(
  provider: Provider,
  resolver: CimdResolver,
  onRefused: RefusalReporter = () => {},
): void {
  const ClientClass = provider.Client;
  const ownFind = ClientClass.find.bind(ClientClass);
  // The client model validates metadata in its constructor (lib/models/client.js), which the typings
  // leave out: a client built here from a metadata document is checked exactly like a registered one.
  const NewClient = ClientClass as unknown as new (metadata: ClientMetadata) => Client;
  const clients = new BoundedCache<Client>(1000);
  // The provider looks a client up more than once per request (again for its error page): one
  // resolution per request, so a failing or hanging document is fetched once, within the 3 s limit.
  const resolutions = new WeakMap<object, Map<string, Promise<CimdResolution>>>();
  // Refusals are counted per resolution, so once per request however often the provider looks.
  const resolve = (id: string, redirectUri: string | undefined) =>
    resolver(id, redirectUri).then((resolution) => {
      if (!resolution.ok) {
        cimdRefusals.inc({ rule: resolution.rule });
        onRefused({
          kind: "sign-in",
          client: id,
          rule: resolution.rule,
          description: ruleOf(resolution.description).description,
        });
      }
      return resolution;
    });
  const resolveOnce = (id: string, redirectUri: string | undefined, ctx: object | undefined) => {
    if (!ctx) return resolve(id, redirectUri);
    const ofRequest = resolutions.get(ctx) ?? new Map<string, Promise<CimdResolution>>();
    resolutions.set(ctx, ofRequest);
    const key = `${id} ${redirectUri ?? ""}`;
    const resolution = ofRequest.get(key) ?? resolve(id, redirectUri);
    ofRequest.set(key, resolution);
    return resolution;
  };

  ClientClass.find = async (id: string): Promise<Client | undefined> => {
    if (typeof id !== "string" || !isUrlClientId(id)) return ownFind(id);
    const ctx = (Provider as unknown as { ctx?: KoaContextWithOIDC }).ctx;
    const redirectUri =
      ctx?.oidc?.route === "authorization" && typeof ctx.oidc.params?.redirect_uri === "string"
        ? ctx.oidc.params.redirect_uri
        : undefined;
    const resolution = await resolveOnce(id, redirectUri, ctx);
    if (!resolution.ok) {
      const ErrorClass = resolution.error === "invalid_client" ? errors.InvalidClient : errors.InvalidRequest;
      throw new ErrorClass(`${resolution.description} [rule ${resolution.rule}]`);
    }
    const method = resolution.metadata.token_endpoint_auth_method;
    if (method !== "none") {
      onRefused({
        kind: "sign-in",
        client: id,
        rule: "document-auth-method-unsupported",
        description: `token_endpoint_auth_method ${method} is not supported`,
      });
      // Refused rather than silently treated as a public client: the client would believe it
      // authenticates while anyone presenting its client_id could redeem its codes.
      throw new errors.InvalidClient(
        `token_endpoint_auth_method ${method} is not supported: this identity provider authenticates no client ` +
          "of a metadata document (only none, a public client with PKCE) [rule document-auth-method-unsupported]",
      );
    }
    const document = resolution.metadata as Record<string, unknown>;
    const key = `${id} ${createHash("sha256").update(JSON.stringify(document)).digest("base64url")}`;
    const cached = clients.get(key);
    if (cached) return cached;

    const redirectUris = resolution.metadata.redirect_uris;
    let client: Client | undefined;
    let lastError: unknown;
    const preferred = preferredApplicationType(redirectUris);
    for (const type of preferred === "native" ? (["native", "web"] as const) : (["web"] as const)) {
      try {
        client = new NewClient(providerMetadata(document, type) as ClientMetadata);
        break;
      } catch (error) {
        lastError = error;
      }
    }
    if (!client) {
      const reason = (lastError as { error_description?: string })?.error_description ?? String(lastError);
      throw new errors.InvalidClient(`the client metadata document cannot be used: ${reason}`);
    }
    const accepted = client;
    accepted.redirectUriAllowed = (uri: string) => redirectUriMatches(accepted.redirectUris ?? [], uri);
    clients.set(key, accepted, Date.now() + 10 * 60_000);
    return accepted;
  };
}
