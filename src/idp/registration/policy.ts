/**
 * The dynamic client registration policy (RFC 7591), the same on both identity providers: which
 * registration requests are accepted, and what is registered. Registration is for public clients
 * that only know this protocol (mcp-remote, Codex CLI, Gemini CLI, older MCP SDKs): no secret,
 * authorization code with PKCE, redirect URIs on loopback (RFC 8252) or on hosts an administrator
 * trusts, and only the `mcp:*` scopes.
 */
export type RegistrationMode = "off" | "loopback" | "trusted-hosts";

export interface RegistrationPolicy {
  mode: RegistrationMode;
  /** Hosts whose https redirect URIs are accepted in trusted-hosts mode (lower case). */
  trustedHosts: readonly string[];
  /** Scopes a registered client may declare: the `mcp:*` scopes (plus offline_access, see below). */
  mcpScopes: readonly string[];
  /** IDP=keycloak: the realm's anonymous Max Clients registration policy (every client of the realm counts). */
  maxClients?: number | undefined;
}

export const REGISTRATION_LIMITS = {
  /** Serialized metadata larger than this is refused. */
  maxMetadataBytes: 8 * 1024,
  maxRedirectUris: 10,
  maxStringLength: 1000,
  /** Nesting of arrays and objects (jwks, the deepest metadata RFC 7591 defines, has 3). */
  maxDepth: 8,
  /** Registrations per source address per window. */
  perAddress: 10,
  windowMs: 60 * 60_000,
  /** Registered clients that never complete a sign-in are deleted after this long. */
  unusedClientTtlSeconds: 24 * 60 * 60,
} as const;

/**
 * Scopes a client may declare besides `mcp:*`: the OpenID ones the provider offers, and
 * offline_access, which mcp-remote sends. offline_access changes nothing for these public clients:
 * like clients of metadata documents they get refresh tokens rotated at each use, that end with
 * the sign-in session unless the user granted offline_access on the consent page.
 */
const OTHER_SCOPES = new Set(["openid", "profile", "offline_access"]);
const GRANTS = new Set(["authorization_code", "refresh_token"]);
const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

type RegistrationVerdict =
  | {
      ok: true;
      /** What the embedded provider registers. */
      metadata: Record<string, unknown>;
      /** The request without what is not registered, `token_endpoint_auth_method: none` explicit (Keycloak's). */
      request: Record<string, unknown>;
    }
  | {
      ok: false;
      error: "invalid_client_metadata" | "invalid_redirect_uri";
      description: string;
      rule: string;
    };

const refuse = (
  error: "invalid_client_metadata" | "invalid_redirect_uri",
  rule: string,
  description: string,
): RegistrationVerdict => ({ ok: false, error, rule, description: `${description} [rule ${rule}]` });

const isLoopbackRedirect = (url: URL) => url.protocol === "http:" && LOOPBACK_HOSTS.has(url.hostname);

export function parseTrustedHosts(value: string | undefined): string[] {
  return (value ?? "")
    .split(",")
    .map((h) => h.trim().toLowerCase())
    .filter(Boolean);
}

/**
 * Every URI field of client metadata, by what the provider does with it. The browser is sent to
 * redirection URIs (RFC 7591 `invalid_redirect_uri` when refused) and to the front-channel and
 * third-party login URIs: the redirect policy applies to all of them, else the provider's sign-out
 * page (post_logout_redirect_uris) or a logout iframe becomes an open redirect. URIs the provider
 * itself would fetch or call are refused: none of the features that use them is offered to
 * registered clients, and loopback there would be the server's own ports. Informative URIs are shown
 * nowhere for a registered client: they are not registered (Keycloak's Trusted Hosts rule would
 * check them against the trusted hosts too). Field names may carry a language tag (`logo_uri#ja`).
 */
const REDIRECTION_URI_LISTS = ["redirect_uris", "post_logout_redirect_uris"] as const;
const BROWSER_URIS = ["initiate_login_uri", "frontchannel_logout_uri"] as const;
const SERVER_FETCHED_URIS = new Set([
  "sector_identifier_uri",
  "request_uris",
  "backchannel_logout_uri",
  "backchannel_client_notification_endpoint",
]);
const INFORMATIVE_URIS = new Set(["client_uri", "logo_uri", "policy_uri", "tos_uri"]);
/** A field this policy does not know that holds URIs, by its name's ending (RFC 7591's convention). */
const URI_FIELD = /_(?:uri|uris|endpoint)$/;
const baseName = (field: string) => field.split("#", 1)[0] as string;

function checkRedirectUri(
  uri: unknown,
  policy: RegistrationPolicy,
  field: string,
  error: "invalid_redirect_uri" | "invalid_client_metadata",
): RegistrationVerdict | undefined {
  if (typeof uri !== "string" || uri.length > REGISTRATION_LIMITS.maxStringLength) {
    return refuse(error, "redirect-uri-malformed", `${field} must be URLs as strings`);
  }
  const url = URL.parse(uri);
  if (!url) return refuse(error, "redirect-uri-malformed", `${field}: ${uri} is not a URL`);
  if (url.hash || url.username || url.password) {
    return refuse(
      error,
      "redirect-uri-malformed",
      `${field}: ${uri} must have no fragment and no user information`,
    );
  }
  if (isLoopbackRedirect(url)) return undefined;
  if (policy.mode === "trusted-hosts" && url.protocol === "https:") {
    if (policy.trustedHosts.includes(url.hostname.toLowerCase())) return undefined;
    return refuse(
      error,
      "redirect-uri-host-not-trusted",
      `${field}: ${uri}: ${url.hostname} is not in DYNAMIC_CLIENT_REGISTRATION_HOSTS`,
    );
  }
  return refuse(
    error,
    policy.mode === "trusted-hosts" ? "redirect-uri-not-allowed" : "redirect-uri-not-loopback",
    policy.mode === "trusted-hosts"
      ? `${field}: ${uri}: URIs the browser is sent to must be http loopback (127.0.0.1, localhost, [::1]) or https on a trusted host`
      : `${field}: ${uri}: URIs the browser is sent to must be http loopback (http://127.0.0.1, http://localhost or http://[::1], any port)`,
  );
}

/**
 * Whether a JSON value nests deeper than `limit` arrays and objects, walked without recursion: a
 * small body of thousands of nested arrays must not overflow the stack of whatever reads it next
 * (JSON.stringify, for the size check, does).
 */
function nestsDeeperThan(value: unknown, limit: number): boolean {
  const pending: [unknown, number][] = [[value, 0]];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [item, depth] = next;
    if (typeof item !== "object" || item === null) continue;
    if (depth >= limit) return true;
    for (const child of Object.values(item)) pending.push([child, depth + 1]);
  }
  return false;
}

/** The URI fields of the metadata: checked, refused, or left out of what is registered. */
function checkUriFields(
  metadata: Record<string, unknown>,
  policy: RegistrationPolicy,
): { refused: RegistrationVerdict } | { kept: Record<string, unknown> } {
  const refuseField = (...args: Parameters<typeof refuse>) => ({ refused: refuse(...args) });
  const kept: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(metadata)) {
    const name = baseName(field);
    // Informative URIs, and URI fields a client sends as null (an unset optional field), are not registered.
    if (INFORMATIVE_URIS.has(name) || (value === null && URI_FIELD.test(name))) continue;
    if (name !== field && URI_FIELD.test(name)) {
      return refuseField(
        "invalid_client_metadata",
        "uri-field-refused",
        `${field}: only informative URIs may carry a language tag`,
      );
    }
    if ((REDIRECTION_URI_LISTS as readonly string[]).includes(field)) {
      if (field !== "redirect_uris" && value !== undefined) {
        if (!Array.isArray(value)) {
          return refuseField(
            "invalid_redirect_uri",
            "redirect-uri-malformed",
            `${field} must be an array of URLs`,
          );
        }
        if (value.length > REGISTRATION_LIMITS.maxRedirectUris) {
          return refuseField(
            "invalid_client_metadata",
            "metadata-oversized",
            `at most ${REGISTRATION_LIMITS.maxRedirectUris} ${field}`,
          );
        }
        for (const uri of value) {
          const refused = checkRedirectUri(uri, policy, field, "invalid_redirect_uri");
          if (refused) return { refused };
        }
      }
    } else if ((BROWSER_URIS as readonly string[]).includes(field)) {
      const refused = checkRedirectUri(value, policy, field, "invalid_client_metadata");
      if (refused) return { refused };
    } else if (field === "jwks_uri") {
      return refuseField(
        "invalid_client_metadata",
        "confidential-client-refused",
        "public clients register no keys",
      );
    } else if (SERVER_FETCHED_URIS.has(field) || URI_FIELD.test(field)) {
      return refuseField(
        "invalid_client_metadata",
        "uri-field-refused",
        `${field} is refused: registered clients may name no URL the identity provider would fetch or call (no pairwise subjects, request objects or back-channel logout)`,
      );
    }
    kept[field] = value;
  }
  return { kept };
}

/**
 * Checks a registration request against the policy; on success, the metadata to register: a
 * public client (token_endpoint_auth_method none, also when the request leaves it out), code and
 * refresh_token grants, `native` when every redirect URI is loopback, and no `scope` member (the
 * `mcp:*` scopes are resource scopes, granted per resource, not client metadata).
 */
export function checkRegistration(body: unknown, policy: RegistrationPolicy): RegistrationVerdict {
  if (policy.mode === "off") {
    return refuse("invalid_client_metadata", "registration-off", "dynamic client registration is off");
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return refuse("invalid_client_metadata", "metadata-malformed", "the request body must be a JSON object");
  }
  // Depth first: measuring the size serializes the metadata, recursively.
  if (nestsDeeperThan(body, REGISTRATION_LIMITS.maxDepth)) {
    return refuse(
      "invalid_client_metadata",
      "metadata-too-deep",
      `client metadata may nest arrays and objects at most ${REGISTRATION_LIMITS.maxDepth} levels deep`,
    );
  }
  const metadata = body as Record<string, unknown>;
  if (Buffer.byteLength(JSON.stringify(metadata)) > REGISTRATION_LIMITS.maxMetadataBytes) {
    return refuse(
      "invalid_client_metadata",
      "metadata-oversized",
      `client metadata must be at most ${REGISTRATION_LIMITS.maxMetadataBytes} bytes`,
    );
  }
  for (const [key, value] of Object.entries(metadata)) {
    if (typeof value === "string" && value.length > REGISTRATION_LIMITS.maxStringLength) {
      return refuse(
        "invalid_client_metadata",
        "metadata-oversized",
        `${key} must be at most ${REGISTRATION_LIMITS.maxStringLength} characters`,
      );
    }
  }
  const method = metadata.token_endpoint_auth_method ?? "none";
  if (method !== "none") {
    return refuse(
      "invalid_client_metadata",
      "confidential-client-refused",
      `token_endpoint_auth_method ${String(method)} is refused: only public clients (none, with PKCE) may register`,
    );
  }
  if (metadata.jwks !== undefined) {
    return refuse(
      "invalid_client_metadata",
      "confidential-client-refused",
      "public clients register no keys",
    );
  }
  const grants = metadata.grant_types ?? ["authorization_code", "refresh_token"];
  if (!Array.isArray(grants) || grants.some((g) => typeof g !== "string")) {
    return refuse("invalid_client_metadata", "metadata-malformed", "grant_types must be an array of strings");
  }
  const refusedGrant = grants.find((g) => !GRANTS.has(g));
  if (refusedGrant !== undefined) {
    return refuse(
      "invalid_client_metadata",
      "grant-type-refused",
      `grant type ${refusedGrant} is refused: only authorization_code and refresh_token`,
    );
  }
  const responseTypes = metadata.response_types ?? ["code"];
  if (!Array.isArray(responseTypes) || responseTypes.some((t) => t !== "code")) {
    return refuse("invalid_client_metadata", "response-type-refused", "response_types may only be code");
  }
  const redirectUris = metadata.redirect_uris;
  if (!Array.isArray(redirectUris) || redirectUris.length === 0) {
    return refuse("invalid_redirect_uri", "redirect-uri-missing", "redirect_uris must list at least one URI");
  }
  if (redirectUris.length > REGISTRATION_LIMITS.maxRedirectUris) {
    return refuse(
      "invalid_client_metadata",
      "metadata-oversized",
      `at most ${REGISTRATION_LIMITS.maxRedirectUris} redirect_uris`,
    );
  }
  for (const uri of redirectUris) {
    const refusal = checkRedirectUri(uri, policy, "redirect_uris", "invalid_redirect_uri");
    if (refusal) return refusal;
  }
  const uris = checkUriFields(metadata, policy);
  if ("refused" in uris) return uris.refused;
  const registered = uris.kept;
  if (metadata.scope !== undefined) {
    if (typeof metadata.scope !== "string") {
      return refuse("invalid_client_metadata", "metadata-malformed", "scope must be a string");
    }
    const extra = metadata.scope
      .split(" ")
      .filter(Boolean)
      .find((s) => !policy.mcpScopes.includes(s) && !OTHER_SCOPES.has(s));
    if (extra !== undefined) {
      return refuse(
        "invalid_client_metadata",
        "scope-not-allowed",
        `scope ${extra} is refused: registered clients may only ask for ${policy.mcpScopes.join(", ")} (and offline_access)`,
      );
    }
  }
  const allLoopback = redirectUris.every((u) => isLoopbackRedirect(new URL(String(u))));
  const { scope: _scope, ...rest } = registered;
  return {
    ok: true,
    metadata: {
      ...rest,
      token_endpoint_auth_method: "none",
      grant_types: grants.includes("authorization_code") ? grants : ["authorization_code", ...grants],
      response_types: ["code"],
      application_type: allLoopback ? "native" : "web",
    },
    request: { ...registered, token_endpoint_auth_method: "none" },
  };
}
