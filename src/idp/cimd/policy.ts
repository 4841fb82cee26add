import {
  CIMD_CONDITION,
  type CimdConfig,
  type CimdPolicy,
  type CimdProfile,
  hostTrusted,
  normalizeHost,
} from "./model.ts";
import { type RuleViolation, violation } from "./rules.ts";

interface PolicyMatch {
  policy: CimdPolicy;
  /** The associated client profiles, in the policy's order. */
  profiles: CimdProfile[];
}

/** The `imaging cimd` client a generated policy belongs to, for hints. */
function clientOfPolicy(name: string): string | undefined {
  return name.startsWith("cimd-policy-") ? name.slice("cimd-policy-".length) : undefined;
}

/** Whether the policy's condition (client-id-uri) selects this client_id; enabled is not looked at. */
function conditionMatches(policy: CimdPolicy, url: URL): boolean {
  const scheme = url.protocol.replace(/:$/, "");
  return (
    policy.condition === CIMD_CONDITION &&
    policy.uriSchemes.map((s) => s.toLowerCase()).includes(scheme) &&
    hostTrusted(policy.trustedDomains, url.hostname)
  );
}

/**
 * The enabled policies whose condition matches the client_id and that have associated profiles (a
 * policy without one has no effect: "Policy exists but CIMD is ignored"), ordered by name. Refuses,
 * naming why, when none applies.
 */
export function selectPolicies(
  config: CimdConfig,
  url: URL,
): { ok: true; matches: PolicyMatch[] } | ({ ok: false } & RuleViolation) {
  const host = normalizeHost(url.hostname);
  const scheme = url.protocol.replace(/:$/, "");
  const policies = [...config.policies].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const matching = policies.filter((p) => p.enabled && conditionMatches(p, url));

  if (matching.length === 0) {
    const disabled = policies.find((p) => !p.enabled && conditionMatches(p, url));
    if (disabled)
      return {
        ok: false,
        ...violation("policy-disabled", `Client policy ${disabled.name} matches client_id but is disabled`),
      };
    const otherScheme = policies.find(
      (p) => p.enabled && p.condition === CIMD_CONDITION && hostTrusted(p.trustedDomains, url.hostname),
    );
    if (otherScheme)
      return {
        ok: false,
        ...violation(
          "policy-uri-scheme",
          `client_id scheme ${scheme} is not among the URI schemes of client policy ${otherScheme.name} ` +
            `(${otherScheme.uriSchemes.join(", ") || "none"})${
              scheme === "http"
                ? ": the HTTP variant needs URI schemes https, http and Allow http scheme ON"
                : ""
            }`,
        ),
      };
    return {
      ok: false,
      ...violation(
        "policy-match",
        `No client policy matches client_id: its host ${host} is not in the trusted domains of any enabled ` +
          `client-id-uri policy`,
      ),
    };
  }

  const linked = matching.filter((p) => p.profiles.length > 0);
  if (linked.length === 0) {
    const policy = matching[0] as CimdPolicy;
    const client = clientOfPolicy(policy.name);
    return {
      ok: false,
      ...violation(
        "policy-not-linked",
        `Policy exists but CIMD is ignored: client policy ${policy.name} has no associated client profile ` +
          `(link one${client ? `: imaging cimd link ${client}` : ""})`,
      ),
    };
  }

  const byName = new Map(config.profiles.map((p) => [p.name, p]));
  const matches: PolicyMatch[] = [];
  for (const policy of linked) {
    const profiles: CimdProfile[] = [];
    for (const name of policy.profiles) {
      const profile = byName.get(name);
      if (!profile)
        return {
          ok: false,
          ...violation(
            "policy-unknown-profile",
            `Client policy ${policy.name} names client profile ${name}, which does not exist`,
          ),
        };
      profiles.push(profile);
    }
    matches.push({ policy, profiles });
  }
  return { ok: true, matches };
}
