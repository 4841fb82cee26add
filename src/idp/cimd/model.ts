/**
 * The CIMD client-policy model, as Keycloak has it (Realm Settings > Client Policies): a profile holds
 * the rules (executor `client-id-metadata-document`), a policy selects the client_ids they apply to
 * (condition `client-id-uri`) and names its profiles ("Associated client profiles"). The embedded
 * identity provider enforces it with resolveCimdClient; the Keycloak provisioning writes it as JSON.
 */

// The records the store keeps are declared with the store (store/cimd.ts); this model is their meaning.
export {
  CIMD_CONDITION,
  CIMD_EXECUTOR,
  type CimdClient,
  type CimdConfig,
  type CimdPolicy,
  type CimdProfile,
} from "../../store/cimd.ts";

export const profileNameOf = (client: string) => `cimd-profile-${client}`;
export const policyNameOf = (client: string) => `cimd-policy-${client}`;

const CLIENT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;

/** A reason the name is unusable, or undefined. */
export function clientNameProblem(client: string): string | undefined {
  return CLIENT_NAME.test(client)
    ? undefined
    : `client name '${client}' must be 1 to 63 letters, digits, '.', '_' or '-', starting with a letter or digit`;
}

/** The two deployment variants of the specification's tables. */
export function variantSettings(http: boolean): { allowHttpScheme: boolean; uriSchemes: string[] } {
  return http
    ? { allowHttpScheme: true, uriSchemes: ["https", "http"] }
    : { allowHttpScheme: false, uriSchemes: ["https"] };
}

/** Host as compared with trusted domains: lower case, IPv6 without brackets. */
export function normalizeHost(host: string): string {
  const lower = host.toLowerCase();
  return lower.startsWith("[") && lower.endsWith("]") ? lower.slice(1, -1) : lower;
}

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

/** A reason a trusted-domain entry is malformed (a URL, a port, a bad wildcard...), or undefined. */
export function trustedDomainProblem(entry: string): string | undefined {
  const value = entry.trim().toLowerCase();
  if (value === "") return "an empty trusted domain";
  if (value.includes("://") || value.includes("/"))
    return `trusted domain '${entry}' must be a host name, not a URL (e.g. claude.ai)`;
  const bare = normalizeHost(value);
  if (bare.includes(":")) {
    // An IPv6 literal is allowed; anything else with a colon is a host with a port.
    if (/^[0-9a-f:.]+$/.test(bare) && bare.split(":").length > 2) return undefined;
    return `trusted domain '${entry}' must not carry a port`;
  }
  if (IPV4.test(bare)) return undefined;
  const domain = bare.startsWith("*.") ? bare.slice(2) : bare;
  if (domain.includes("*")) return `trusted domain '${entry}': a wildcard is only allowed as '*.domain'`;
  if (!domain.split(".").every((label) => LABEL.test(label)))
    return `trusted domain '${entry}' is not a valid host name`;
  return undefined;
}

/** Keycloak's matching: the exact host, or `*.example.org` for example.org and all its subdomains. */
export function domainMatches(pattern: string, host: string): boolean {
  const p = normalizeHost(pattern.trim());
  const h = normalizeHost(host);
  if (p === "" || h === "") return false;
  if (p.startsWith("*.")) {
    const base = p.slice(2);
    return h === base || h.endsWith(`.${base}`);
  }
  return p === h;
}

export function hostTrusted(domains: readonly string[], host: string): boolean {
  return domains.some((d) => domainMatches(d, host));
}

/** True when the host itself (not through a wildcard) is in the list. */
export function hostListedExactly(domains: readonly string[], host: string): boolean {
  const h = normalizeHost(host);
  return domains.some((d) => !d.trim().startsWith("*.") && normalizeHost(d.trim()) === h);
}

export const LOOPBACK_HOSTS = ["localhost", "127.0.0.1", "::1"] as const;

export function isLoopbackHost(host: string): boolean {
  return (LOOPBACK_HOSTS as readonly string[]).includes(normalizeHost(host));
}

/** Splits a comma-separated list, trims, drops empties and duplicates (first occurrence kept). */
export function parseDomainList(value: string): string[] {
  return [
    ...new Set(
      value
        .split(",")
        .map((d) => d.trim().toLowerCase())
        .filter((d) => d !== ""),
    ),
  ];
}
