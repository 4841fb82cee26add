import { checkClientIdUrl } from "./client-id.ts";
import {
  type CimdClient,
  type CimdPolicy,
  type CimdProfile,
  hostTrusted,
  LOOPBACK_HOSTS,
  normalizeHost,
} from "./model.ts";

export interface CimdDiagnosis {
  /** Mistakes that make sign-in fail (the specification's Errors table). */
  problems: string[];
  /** Worth knowing, not blocking. */
  notes: string[];
}

/**
 * What is wrong with one client's profile and policy, in the words of the specification's Errors
 * table: profile not linked, client domain missing from either list, http without the HTTP variant.
 */
export function diagnoseCimdClient(
  client: Pick<CimdClient, "client" | "clientId">,
  profile: CimdProfile | undefined,
  policy: CimdPolicy | undefined,
  knownProfiles: readonly string[] = profile ? [profile.name] : [],
): CimdDiagnosis {
  const problems: string[] = [];
  const notes: string[] = [];
  const url = URL.parse(client.clientId);
  const host = url ? normalizeHost(url.hostname) : undefined;
  const scheme = url?.protocol.replace(/:$/, "");

  if (!profile)
    problems.push(`profile cimd-profile-${client.client} is missing: run imaging cimd remove and add again`);
  if (!policy)
    problems.push(`policy cimd-policy-${client.client} is missing: run imaging cimd remove and add again`);

  if (policy) {
    if (!policy.enabled)
      problems.push(
        `policy ${policy.name} is disabled: enable it with imaging cimd set ${client.client} --enable`,
      );
    if (profile && !policy.profiles.includes(profile.name))
      problems.push(
        policy.profiles.length === 0
          ? `CIMD is ignored: link the profile with \`imaging cimd link ${client.client}\``
          : `profile ${profile.name} is not among the policy's associated profiles: link it with \`imaging cimd link ${client.client}\``,
      );
    else if (!profile && policy.profiles.length === 0)
      problems.push(`CIMD is ignored: the policy has no associated profile`);
    for (const name of policy.profiles)
      if (!knownProfiles.includes(name))
        problems.push(`policy ${policy.name} names profile ${name}, which does not exist`);
    if (policy.trustedDomains.length === 0)
      problems.push(`policy ${policy.name} has no trusted domains: it never matches`);
    else if (host !== undefined && !hostTrusted(policy.trustedDomains, host))
      problems.push(
        `client domain ${host} is missing from the policy's trusted domains: the policy does not apply to the client ` +
          `(imaging cimd set ${client.client} --policy-domains ${host})`,
      );
    if (scheme !== undefined && !policy.uriSchemes.includes(scheme))
      problems.push(
        scheme === "http"
          ? `client_id uses http but the policy's URI schemes are ${policy.uriSchemes.join(", ")}: use the HTTP variant (imaging cimd set ${client.client} --http)`
          : `client_id scheme ${scheme} is not among the policy's URI schemes (${policy.uriSchemes.join(", ")})`,
      );
  }

  if (profile) {
    const checked = checkClientIdUrl(client.clientId, { allowHttpScheme: profile.allowHttpScheme });
    if (!checked.ok)
      problems.push(
        checked.rule === "client-id-scheme" && scheme === "http"
          ? `client_id uses http but Allow http scheme is OFF in the profile: use the HTTP variant (imaging cimd set ${client.client} --http), for development only`
          : checked.description,
      );
    if (profile.trustedDomains.length === 0)
      problems.push(`profile ${profile.name} has no trusted domains: it refuses every request`);
    else if (host !== undefined && !hostTrusted(profile.trustedDomains, host))
      problems.push(
        `client domain ${host} is missing from the profile's trusted domains: its metadata document is not fetched`,
      );
    const missingLoopback = LOOPBACK_HOSTS.filter(
      (h) => h !== "::1" && !hostTrusted(profile.trustedDomains, h),
    );
    if (profile.trustedDomains.length > 0 && missingLoopback.length > 0)
      notes.push(
        `loopback callback host${missingLoopback.length > 1 ? "s" : ""} ${missingLoopback.join(", ")} not in the profile's trusted domains: native clients' callbacks there are refused`,
      );
    if (profile.onlyAllowConfidentialClient)
      notes.push(
        "Only Allow Confidential Client is ON: public AI clients (Claude Code, VS Code) are refused",
      );
    if (profile.restrictSameDomain)
      notes.push("Restrict same domain is ON: loopback callbacks of native clients are refused");
  }

  const httpProfile = profile?.allowHttpScheme ?? false;
  const httpPolicy = policy?.uriSchemes.includes("http") ?? false;
  if (httpProfile && httpPolicy)
    notes.push("HTTP variant (Allow http scheme ON, URI schemes https, http): for development or test only");
  else if (httpProfile)
    notes.push("Allow http scheme is ON in the profile but the policy's URI schemes lack http");
  else if (httpPolicy)
    notes.push("the policy's URI schemes include http but Allow http scheme is OFF in the profile");
  return { problems, notes };
}
