import { printable } from "../../domain/printable-text.ts";
import { checkClientIdUrl } from "./client-id.ts";
import { type ClientMetadataDocument, checkDocument } from "./document.ts";
import { type CimdDocumentFetcher, CimdFetchError } from "./fetcher.ts";
import { type CimdConfig, hostListedExactly, hostTrusted, normalizeHost } from "./model.ts";
import { selectPolicies } from "./policy.ts";
import { redirectUriMatches } from "./redirect.ts";
import type { CimdRule } from "./rules.ts";

export interface CimdContext {
  /**
   * The profiles and policies in force, or a function reading them (from the store): called on every
   * resolution, so a change made with `imaging cimd ...` applies to the next request.
   */
  config: CimdConfig | (() => CimdConfig | Promise<CimdConfig>);
  /** The document fetcher and its cache (the identity provider owns one, with its CA settings). */
  fetcher: CimdDocumentFetcher;
  /** The authorization request's redirect_uri: when given, it must be one of the document's. */
  redirectUri?: string | undefined;
}

export type CimdResolution =
  | { ok: true; metadata: ClientMetadataDocument; policy: string; profile: string }
  | { ok: false; error: "invalid_client" | "invalid_request"; description: string; rule: CimdRule };

const refuse = (
  error: "invalid_client" | "invalid_request",
  rule: CimdRule,
  description: string,
): CimdResolution => ({ ok: false, error, rule, description: printable(description) });

/**
 * Resolves a URL client_id for an authorization request, as Keycloak's client policies do:
 * 1. an enabled policy whose client-id-uri condition matches (scheme in its URI schemes, host in its
 *    trusted domains) and that has an associated profile; otherwise the client is unknown
 *    (invalid_client), "Policy exists but CIMD is ignored" naming an unlinked policy;
 * 2. each associated profile checks the client_id URL and that its host is in the profile's trusted
 *    domains, before anything is fetched;
 * 3. the document is fetched (cached by URL; special-use addresses only when the policy lists the
 *    host itself) and each profile checks it;
 * 4. when the request's redirect_uri is given, it must be one of the document's (loopback: any port).
 * The policy and profile checks run on every call; only the fetch is cached. Refusals of steps 2-4
 * are invalid_request, as Keycloak's executor answers; `description` names the rule.
 */
export async function resolveCimdClient(clientId: string, context: CimdContext): Promise<CimdResolution> {
  const config = typeof context.config === "function" ? await context.config() : context.config;
  const url = URL.parse(clientId);
  if (!url) return refuse("invalid_client", "client-id-url", "client_id is not an absolute URL");

  const selection = selectPolicies(config, url);
  if (!selection.ok) return refuse("invalid_client", selection.rule, selection.description);

  const host = normalizeHost(url.hostname);
  const pairs = selection.matches.flatMap((m) =>
    m.profiles.map((profile) => ({ policy: m.policy, profile })),
  );
  for (const { profile } of pairs) {
    const checked = checkClientIdUrl(clientId, {
      allowHttpScheme: profile.allowHttpScheme,
      profile: profile.name,
    });
    if (!checked.ok) return refuse("invalid_request", checked.rule, checked.description);
    if (!hostTrusted(profile.trustedDomains, host))
      return refuse(
        "invalid_request",
        "profile-trusted-domain",
        profile.trustedDomains.length === 0
          ? `Client profile ${profile.name} has no trusted domains: it refuses every client`
          : `client_id host ${host} is not in the trusted domains of client profile ${profile.name}: its document is not fetched`,
      );
  }

  const allowSpecialAddresses = selection.matches.some((m) =>
    hostListedExactly(m.policy.trustedDomains, host),
  );
  let document: unknown;
  try {
    document = await context.fetcher.fetchDocument(clientId, { allowSpecialAddresses });
  } catch (error) {
    const failure =
      error instanceof CimdFetchError ? error : new CimdFetchError("fetch-network", (error as Error).message);
    return refuse("invalid_request", failure.rule, `Client metadata fetch failed: ${failure.message}`);
  }

  let accepted: { metadata: ClientMetadataDocument; policy: string; profile: string } | undefined;
  for (const { policy, profile } of pairs) {
    const verdict = checkDocument(document, clientId, profile);
    if (!verdict.ok) return refuse("invalid_request", verdict.rule, verdict.description);
    accepted ??= { metadata: verdict.metadata, policy: policy.name, profile: profile.name };
  }
  if (!accepted)
    return refuse("invalid_client", "policy-not-linked", "No client profile applies to client_id");

  if (
    context.redirectUri !== undefined &&
    !redirectUriMatches(accepted.metadata.redirect_uris, context.redirectUri)
  )
    return refuse(
      "invalid_request",
      "redirect-uri-mismatch",
      `redirect_uri ${context.redirectUri} is not one of the redirect_uris of the client metadata document`,
    );
  return { ok: true, ...accepted };
}
