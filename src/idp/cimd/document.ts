import { type CimdProfile, hostTrusted, isLoopbackHost, normalizeHost } from "./model.ts";
import { type RuleViolation, violation } from "./rules.ts";

/** A client metadata document as accepted: the fields the identity provider uses, the rest kept. */
export interface ClientMetadataDocument {
  client_id: string;
  redirect_uris: string[];
  /** "none" (public client) when the document does not say. */
  token_endpoint_auth_method: string;
  client_name?: string;
  client_uri?: string;
  logo_uri?: string;
  tos_uri?: string;
  policy_uri?: string;
  jwks_uri?: string;
  grant_types?: string[];
  response_types?: string[];
  scope?: string;
  application_type?: string;
  [property: string]: unknown;
}

/** Document URLs other than redirect URIs that the profile's trusted domains also govern. */
const OTHER_URL_FIELDS = ["client_uri", "logo_uri", "tos_uri", "policy_uri", "jwks_uri"] as const;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const isStringArray = (value: unknown): value is string[] =>
  Array.isArray(value) && value.every((v) => typeof v === "string");

type Verdict = { ok: true; metadata: ClientMetadataDocument } | ({ ok: false } & RuleViolation);

const refuse = (rule: RuleViolation["rule"], description: string): Verdict => ({
  ok: false,
  ...violation(rule, description),
});

/** Redirect hosts under restrictSameDomain: the client_id's host or one of its subdomains. */
function sameDomain(host: string, clientIdHost: string): boolean {
  const h = normalizeHost(host);
  const c = normalizeHost(clientIdHost);
  return h === c || h.endsWith(`.${c}`);
}

/**
 * The profile's checks of a fetched document: a JSON object whose client_id equals the URL exactly,
 * non-empty redirect_uris of strings, no symmetric client authentication, confidential-only when
 * asked, and every URL (redirect URIs, client_uri, logo_uri, tos_uri, policy_uri, jwks_uri) on a
 * trusted host, https unless it is a loopback http redirect URI or the profile allows http.
 */
export function checkDocument(document: unknown, clientId: string, profile: CimdProfile): Verdict {
  const where = `profile ${profile.name}`;
  if (!isObject(document)) return refuse("document-json", "Client metadata document is not a JSON object");
  if (document.client_id !== clientId)
    return refuse(
      "document-client-id",
      `Client metadata document's client_id ${JSON.stringify(document.client_id ?? null)} does not equal the client_id URL exactly`,
    );
  const redirectUris = document.redirect_uris;
  if (!isStringArray(redirectUris) || redirectUris.length === 0)
    return refuse(
      "document-redirect-uris",
      "Client metadata document's redirect_uris must be a non-empty array of strings",
    );
  if ("client_secret" in document)
    return refuse(
      "document-client-secret",
      "Client metadata document must not contain client_secret (symmetric client authentication is refused)",
    );
  const method = document.token_endpoint_auth_method ?? "none";
  if (typeof method !== "string")
    return refuse(
      "document-auth-method",
      "Client metadata document's token_endpoint_auth_method must be a string",
    );
  if (method.startsWith("client_secret_"))
    return refuse(
      "document-auth-method",
      `token_endpoint_auth_method ${method} is refused: symmetric client authentication (client_secret_*) is not allowed`,
    );
  if (profile.onlyAllowConfidentialClient && method === "none")
    return refuse(
      "confidential-only",
      `Only Allow Confidential Client is ON in ${where}: a public client (token_endpoint_auth_method none) is refused`,
    );
  if (document.client_name !== undefined && typeof document.client_name !== "string")
    return refuse("document-json", "Client metadata document's client_name must be a string");

  const clientIdHost = new URL(clientId).hostname;
  for (const uri of redirectUris) {
    const url = URL.parse(uri);
    if (!url) return refuse("redirect-uri-url", `redirect URI ${uri} is not an absolute URL`);
    if (uri.includes("#"))
      return refuse("redirect-uri-fragment", `redirect URI ${uri} must not contain a fragment`);
    const loopbackHttp = url.protocol === "http:" && isLoopbackHost(url.hostname);
    if (!(url.protocol === "https:" || loopbackHttp || (url.protocol === "http:" && profile.allowHttpScheme)))
      return refuse(
        "redirect-uri-scheme",
        `redirect URI ${uri} must use https (http only for a loopback address, or with Allow http scheme ON in ${where})`,
      );
    if (!hostTrusted(profile.trustedDomains, url.hostname))
      return refuse(
        "redirect-uri-domain",
        `redirect URI host ${normalizeHost(url.hostname)} is not in the trusted domains of ${where}`,
      );
    if (profile.restrictSameDomain && !sameDomain(url.hostname, clientIdHost))
      return refuse(
        "redirect-uri-same-domain",
        `Restrict same domain is ON in ${where}: redirect URI host ${normalizeHost(url.hostname)} is not in the client_id's domain ${normalizeHost(clientIdHost)}`,
      );
  }
  for (const field of OTHER_URL_FIELDS) {
    const value = document[field];
    if (value === undefined) continue;
    const url = typeof value === "string" ? URL.parse(value) : null;
    if (!url) return refuse("document-uri", `Client metadata document's ${field} is not an absolute URL`);
    if (!(url.protocol === "https:" || (url.protocol === "http:" && profile.allowHttpScheme)))
      return refuse("document-uri", `Client metadata document's ${field} must use https`);
    if (!hostTrusted(profile.trustedDomains, url.hostname))
      return refuse(
        "document-uri",
        `${field} host ${normalizeHost(url.hostname)} is not in the trusted domains of ${where}`,
      );
  }
  return {
    ok: true,
    metadata: {
      ...document,
      client_id: clientId,
      redirect_uris: [...redirectUris],
      token_endpoint_auth_method: method,
    },
  };
}
