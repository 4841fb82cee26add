import { checkClientIdUrl } from "../idp/cimd/client-id.ts";
import { hostTrusted, normalizeHost } from "../idp/cimd/model.ts";
import { CIMD_PRESETS } from "../idp/cimd/presets.ts";
import type { CimdClientState } from "../idp/cimd/repository.ts";
import { UNKNOWN_CLIENT_ID } from "../idp/keycloak/cimd-repository.ts";
import { type Check, type CheckDefinition, fail, notApplicable, pass, warn } from "./check.ts";
import type { IdpKind } from "./identity-provider.ts";

/**
 * The specification's per-client identity provider configuration, one check per rule and per row of
 * its Errors table ("Browser sign-in never opens, or the callback fails", "Policy exists but CIMD is
 * ignored"). Fixes name the `imaging cimd` command, which drives both identity providers, and for
 * Keycloak where the same setting is in its console.
 */

export interface CimdCheckContext {
  idp: IdpKind;
  realm: string;
  /** base_url is http: the HTTP variant (development) applies. */
  http: boolean;
}

const LOOPBACK = ["localhost", "127.0.0.1"];

const CONSOLE = "Realm Settings > Client Policies";

/** "Run `a` then `b`", with where the same setting is in Keycloak's console. */
function fixWith(context: CimdCheckContext, commands: string | string[], consoleHint: string): string {
  const run = `Run ${[commands]
    .flat()
    .map((c) => `\`${c}\``)
    .join(" then ")}`;
  return context.idp === "keycloak"
    ? `${run} (in Keycloak's console, realm ${context.realm}: ${CONSOLE} > ${consoleHint}).`
    : `${run}.`;
}

/** Domains the profile must trust: the client_id's host, those of a known client's preset, and loopback. */
export function requiredProfileDomains(clientId: string): string[] {
  const url = URL.parse(clientId);
  const host = url ? normalizeHost(url.hostname) : undefined;
  const preset = Object.values(CIMD_PRESETS).find((p) => p.clientId === clientId);
  return [...new Set([...(host ? [host] : []), ...(preset?.trustedDomains ?? []), ...LOOPBACK])];
}

/** The commands that make the pair again, as `imaging cimd add` would. */
function recreateCommands(state: CimdClientState, context: CimdCheckContext): string[] {
  const { client, clientId } = state.client;
  const preset = Object.values(CIMD_PRESETS).find((p) => p.clientId === clientId);
  const source = preset
    ? `--preset ${preset.id}`
    : `--client-id ${clientId === UNKNOWN_CLIENT_ID ? "<client_id URL>" : clientId}`;
  return [
    `imaging cimd remove ${client}`,
    `imaging cimd add ${client} ${source}${context.http ? " --http" : ""}`,
  ];
}

const defs = (client: string) => ({
  clientId: {
    id: `cimd-client-id:${client}`,
    title: `${client}: client_id is a URL with a path, no query or fragment`,
  },
  exists: {
    id: `cimd-profile:${client}`,
    title: `${client}: its profile and policy exist and the policy is enabled`,
  },
  linked: {
    id: `cimd-linked:${client}`,
    title: `${client}: the profile is linked to the policy (Associated client profiles)`,
  },
  policyDomains: {
    id: `cimd-policy-domains:${client}`,
    title: `${client}: the client_id's domain is in the policy's trusted domains`,
  },
  profileDomains: {
    id: `cimd-profile-domains:${client}`,
    title: `${client}: the profile's trusted domains hold the client's domains, localhost and 127.0.0.1`,
  },
  httpScheme: {
    id: `cimd-http-scheme:${client}`,
    title: `${client}: Allow http scheme suits the client_id (ON only for an http client_id, OFF over https)`,
  },
  switches: {
    id: `cimd-profile-switches:${client}`,
    title: `${client}: Restrict same domain and Only Allow Confidential Client are OFF`,
  },
});

function clientIdCheck(state: CimdClientState, context: CimdCheckContext): Check {
  const { client, clientId } = state.client;
  const def = defs(client).clientId;
  const fix = fixWith(
    context,
    `imaging cimd set ${client} --client-id https://<client-domain>/oauth/client-metadata.json`,
    `Policies > ${state.client.policy}`,
  );
  if (clientId === UNKNOWN_CLIENT_ID)
    return warn(
      def,
      "no client_id recorded (the pair was made outside imaging cimd): the client_id rules cannot be checked",
      fixWith(
        context,
        `imaging cimd set ${client} --client-id <client_id URL>`,
        `Policies > ${state.client.policy}`,
      ),
    );
  const checked = checkClientIdUrl(clientId, { allowHttpScheme: true });
  if (!checked.ok) return fail(def, `client_id ${clientId}: ${checked.description}`, fix);
  if (checked.url.protocol === "http:")
    return warn(def, `client_id ${clientId} uses http: AI clients present https client_ids`, fix);
  return pass(def, `client_id ${clientId}`);
}

function existsCheck(
  state: CimdClientState,
  knownProfiles: readonly string[],
  context: CimdCheckContext,
): Check {
  const { client: c, profile, policy } = state;
  const def = defs(c.client).exists;
  if (!profile || !policy) {
    const missing = [!profile && `profile ${c.profile}`, !policy && `policy ${c.policy}`].filter(Boolean);
    return fail(
      def,
      `${missing.join(" and ")} ${missing.length > 1 ? "are" : "is"} missing: the identity provider cannot apply CIMD to ${c.client}`,
      fixWith(
        context,
        recreateCommands(state, context),
        `create ${missing.join(" and ")} under ${!profile ? "Profiles" : "Policies"}`,
      ),
    );
  }
  const unknown = policy.profiles.filter((name) => !knownProfiles.includes(name) && name !== profile.name);
  if (unknown.length > 0)
    return fail(
      def,
      `policy ${policy.name} names profile ${unknown.join(", ")}, which does not exist`,
      fixWith(
        context,
        [`imaging cimd unlink ${c.client}`, `imaging cimd link ${c.client}`],
        `Policies > ${policy.name} > Associated client profiles`,
      ),
    );
  if (!policy.enabled)
    return fail(
      def,
      `policy ${policy.name} is disabled: ${c.clientId} is refused`,
      fixWith(context, `imaging cimd set ${c.client} --enable`, `Policies > ${policy.name} > Enabled`),
    );
  return pass(def, `profile ${profile.name} and policy ${policy.name} (enabled)`);
}

function linkedCheck(state: CimdClientState, context: CimdCheckContext): Check {
  const { client: c, profile, policy } = state;
  const def = defs(c.client).linked;
  if (!policy) return notApplicable(def, `policy ${c.policy} is missing (see cimd-profile:${c.client})`);
  if (!policy.profiles.includes(c.profile))
    return fail(
      def,
      `Policy exists but CIMD is ignored: the Associated client profiles of ${policy.name} are ` +
        `${policy.profiles.length > 0 ? policy.profiles.join(", ") : "empty"}, without ${c.profile}`,
      fixWith(
        context,
        `imaging cimd link ${c.client}`,
        `Policies > ${policy.name} > Associated client profiles: add ${c.profile}`,
      ),
    );
  if (!profile) return notApplicable(def, `profile ${c.profile} is missing (see cimd-profile:${c.client})`);
  return pass(def, `${policy.name} associates ${c.profile}`);
}

function policyDomainsCheck(state: CimdClientState, context: CimdCheckContext): Check {
  const { client: c, policy } = state;
  const def = defs(c.client).policyDomains;
  if (!policy) return notApplicable(def, `policy ${c.policy} is missing (see cimd-profile:${c.client})`);
  const url = URL.parse(c.clientId);
  if (!url)
    return notApplicable(
      def,
      `${c.clientId === UNKNOWN_CLIENT_ID ? "no client_id recorded" : `client_id ${c.clientId} is not a URL`} (see cimd-client-id:${c.client})`,
    );
  const host = normalizeHost(url.hostname);
  const scheme = url.protocol.replace(/:$/, "");
  const where = `Policies > ${policy.name} > condition client-id-uri`;
  if (!hostTrusted(policy.trustedDomains, host)) {
    const domains = [...new Set([...policy.trustedDomains, host])].join(",");
    return fail(
      def,
      `client domain ${host} is not in ${policy.name}'s trusted domains (${policy.trustedDomains.join(", ") || "none"}): the policy does not apply to ${c.clientId}`,
      fixWith(
        context,
        `imaging cimd set ${c.client} --policy-domains ${domains}`,
        `${where} > Trusted domains`,
      ),
    );
  }
  if (!policy.uriSchemes.includes(scheme))
    return fail(
      def,
      `client_id scheme ${scheme} is not among ${policy.name}'s URI schemes (${policy.uriSchemes.join(", ") || "none"})`,
      fixWith(
        context,
        `imaging cimd set ${c.client} ${scheme === "http" ? "--http" : "--https"}`,
        `${where} > URI scheme`,
      ),
    );
  return pass(def, `${host} matches ${policy.name}'s trusted domains (${policy.trustedDomains.join(", ")})`);
}

function profileDomainsCheck(state: CimdClientState, context: CimdCheckContext): Check {
  const { client: c, profile } = state;
  const def = defs(c.client).profileDomains;
  if (!profile) return notApplicable(def, `profile ${c.profile} is missing (see cimd-profile:${c.client})`);
  const required = requiredProfileDomains(c.clientId);
  const missing = required.filter((d) => !hostTrusted(profile.trustedDomains, d));
  const current = profile.trustedDomains.join(", ") || "none";
  if (missing.length > 0) {
    const loopback = missing.some((d) => LOOPBACK.includes(d));
    const why = loopback
      ? "the loopback callback of the AI client is refused"
      : "the client's metadata document is not fetched";
    const domains = [...new Set([...profile.trustedDomains, ...missing])].join(",");
    return fail(
      def,
      `${missing.join(", ")} ${missing.length > 1 ? "are" : "is"} missing from ${profile.name}'s trusted domains (${current}): ${why}`,
      fixWith(
        context,
        `imaging cimd set ${c.client} --trusted-domains ${domains}`,
        `Profiles > ${profile.name} > executor client-id-metadata-document > Trusted domains`,
      ),
    );
  }
  return pass(def, `${profile.name} trusts ${current}`);
}

/**
 * What Allow http scheme governs, in both identity providers: an http client_id (and, in the embedded
 * one, http URLs in the metadata document other than loopback callbacks). An https client_id with its
 * loopback http callback signs in with it OFF, whatever base_url's scheme.
 */
function httpSchemeCheck(state: CimdClientState, context: CimdCheckContext): Check {
  const { client: c, profile, policy } = state;
  const def = defs(c.client).httpScheme;
  if (!profile) return notApplicable(def, `profile ${c.profile} is missing (see cimd-profile:${c.client})`);
  const hint = `Profiles > ${profile.name} > executor client-id-metadata-document > Allow http scheme`;
  const httpClientId = URL.parse(c.clientId)?.protocol === "http:";
  if (httpClientId) {
    if (!profile.allowHttpScheme)
      return fail(
        def,
        `client_id ${c.clientId} is http but Allow http scheme is OFF in ${profile.name}: the identity provider refuses it`,
        fixWith(context, `imaging cimd set ${c.client} --http`, `${hint} ON`),
      );
    if (policy && !policy.uriSchemes.includes("http"))
      return warn(
        def,
        `Allow http scheme is ON in ${profile.name} but ${policy.name}'s URI schemes are ${policy.uriSchemes.join(", ")} (the HTTP variant has https, http)`,
        fixWith(context, `imaging cimd set ${c.client} --http`, `Policies > ${policy.name} > URI scheme`),
      );
    return pass(
      def,
      `client_id is http: HTTP variant (Allow http scheme ON in ${profile.name}), development only`,
    );
  }
  if (!profile.allowHttpScheme)
    return pass(
      def,
      `HTTPS variant (Allow http scheme OFF in ${profile.name}): the https client_id and its loopback callback need no http scheme${context.http ? ", also with an http base_url" : ""}`,
    );
  if (context.http)
    return pass(
      def,
      `base_url is http: HTTP variant (Allow http scheme ON in ${profile.name}), development only; the https client_id would also sign in with it OFF`,
    );
  return warn(
    def,
    `base_url is https but Allow http scheme is ON in ${profile.name}: the HTTP variant is for development or test only`,
    fixWith(context, `imaging cimd set ${c.client} --https`, `${hint} OFF`),
  );
}

function switchesCheck(state: CimdClientState, context: CimdCheckContext): Check {
  const { client: c, profile } = state;
  const def = defs(c.client).switches;
  if (!profile) return notApplicable(def, `profile ${c.profile} is missing (see cimd-profile:${c.client})`);
  const on = [
    profile.restrictSameDomain && "Restrict same domain is ON (loopback callbacks are refused)",
    profile.onlyAllowConfidentialClient &&
      "Only Allow Confidential Client is ON (public AI clients are refused)",
  ].filter((p): p is string => typeof p === "string");
  if (on.length > 0)
    return fail(
      def,
      `${profile.name}: ${on.join("; ")}`,
      fixWith(
        context,
        `imaging cimd set ${c.client} --restrict-same-domain off --only-confidential off`,
        `Profiles > ${profile.name} > executor client-id-metadata-document`,
      ),
    );
  return pass(def, `${profile.name}: both OFF`);
}

/** Every rule for one client, in the order an administrator would fix them. */
export function cimdClientChecks(
  state: CimdClientState,
  knownProfiles: readonly string[],
  context: CimdCheckContext,
): Check[] {
  return [
    clientIdCheck(state, context),
    existsCheck(state, knownProfiles, context),
    linkedCheck(state, context),
    policyDomainsCheck(state, context),
    profileDomainsCheck(state, context),
    httpSchemeCheck(state, context),
    switchesCheck(state, context),
  ];
}

const CIMD_CLIENTS: CheckDefinition = {
  id: "cimd-clients",
  title: "At least one AI client has a CIMD profile and policy",
};

export function noCimdClientCheck(location: string): Check {
  return warn(
    CIMD_CLIENTS,
    `no CIMD client is configured in ${location}: every AI client's sign-in is refused`,
    "Add one per AI client, e.g. `imaging cimd add claude-code --preset claude-code` (add --http over http).",
  );
}

export function cimdUnavailableCheck(location: string, reason: string, idp: IdpKind): Check {
  return fail(
    CIMD_CLIENTS,
    `cannot read the CIMD profiles and policies of ${location}: ${reason}`,
    idp === "keycloak"
      ? "Check KEYCLOAK_URL and the Keycloak administrator settings (KEYCLOAK_ADMIN_USERNAME/PASSWORD or KEYCLOAK_ADMIN_CLIENT_ID/SECRET)."
      : "Give this command the gateway's data directory and store (--data-dir, DATABASE_URL).",
  );
}
