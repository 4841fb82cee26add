import { CIMD_CONDITION, CIMD_EXECUTOR, type CimdPolicy, type CimdProfile } from "./model.ts";

/**
 * The same profiles and policies in Keycloak's Admin REST representation
 * (`/admin/realms/{realm}/client-policies/profiles` and `.../policies`), with its configuration keys.
 */
export interface KeycloakClientProfile {
  name: string;
  description?: string;
  executors: { executor: string; configuration: Record<string, unknown> }[];
}

export interface KeycloakClientPolicy {
  name: string;
  description?: string;
  enabled: boolean;
  conditions: { condition: string; configuration: Record<string, unknown> }[];
  profiles: string[];
}

const KEYCLOAK_KEYS = {
  allowHttpScheme: "cimd-allow-http-scheme",
  profileTrustedDomains: "cimd-allow-permitted-domains",
  restrictSameDomain: "cimd-restrict-same-domain",
  onlyAllowConfidentialClient: "only-allow-confidential-client",
  uriSchemes: "client-id-uri-scheme",
  policyTrustedDomains: "client-id-uri-allow-permitted-domains",
} as const;

export function toKeycloakProfile(profile: CimdProfile): KeycloakClientProfile {
  return {
    name: profile.name,
    description: "CIMD rules (managed by imaging cimd)",
    executors: [
      {
        executor: CIMD_EXECUTOR,
        configuration: {
          [KEYCLOAK_KEYS.allowHttpScheme]: profile.allowHttpScheme,
          [KEYCLOAK_KEYS.profileTrustedDomains]: [...profile.trustedDomains],
          [KEYCLOAK_KEYS.restrictSameDomain]: profile.restrictSameDomain,
          [KEYCLOAK_KEYS.onlyAllowConfidentialClient]: profile.onlyAllowConfidentialClient,
        },
      },
    ],
  };
}

export function toKeycloakPolicy(policy: CimdPolicy): KeycloakClientPolicy {
  return {
    name: policy.name,
    description: "CIMD client selection (managed by imaging cimd)",
    enabled: policy.enabled,
    conditions: [
      {
        condition: CIMD_CONDITION,
        configuration: {
          [KEYCLOAK_KEYS.uriSchemes]: [...policy.uriSchemes],
          [KEYCLOAK_KEYS.policyTrustedDomains]: [...policy.trustedDomains],
        },
      },
    ],
    profiles: [...policy.profiles],
  };
}

/** Keycloak takes booleans as JSON booleans or "true"/"false" strings. */
function bool(value: unknown): boolean {
  return value === true || (typeof value === "string" && value.trim().toLowerCase() === "true");
}

/** Lists come as JSON arrays, or as a string holding a JSON array or comma-separated values. */
function strings(value: unknown): string[] {
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === "string");
  if (typeof value !== "string" || value.trim() === "") return [];
  try {
    const parsed: unknown = JSON.parse(value);
    if (Array.isArray(parsed)) return parsed.filter((v): v is string => typeof v === "string");
  } catch {
    // not JSON: comma-separated
  }
  return value
    .split(/,|##/)
    .map((v) => v.trim())
    .filter((v) => v !== "");
}

/** The CIMD profile a Keycloak profile holds, or undefined when it has no CIMD executor. */
export function fromKeycloakProfile(profile: KeycloakClientProfile): CimdProfile | undefined {
  const executor = profile.executors?.find((e) => e.executor === CIMD_EXECUTOR);
  if (!executor) return undefined;
  const c = executor.configuration ?? {};
  return {
    name: profile.name,
    executor: CIMD_EXECUTOR,
    allowHttpScheme: bool(c[KEYCLOAK_KEYS.allowHttpScheme]),
    restrictSameDomain: bool(c[KEYCLOAK_KEYS.restrictSameDomain]),
    onlyAllowConfidentialClient: bool(c[KEYCLOAK_KEYS.onlyAllowConfidentialClient]),
    trustedDomains: strings(c[KEYCLOAK_KEYS.profileTrustedDomains]),
  };
}

/** The CIMD policy a Keycloak policy holds, or undefined when it has no client-id-uri condition. */
export function fromKeycloakPolicy(policy: KeycloakClientPolicy): CimdPolicy | undefined {
  const condition = policy.conditions?.find((c) => c.condition === CIMD_CONDITION);
  if (!condition) return undefined;
  const c = condition.configuration ?? {};
  return {
    name: policy.name,
    condition: CIMD_CONDITION,
    uriSchemes: strings(c[KEYCLOAK_KEYS.uriSchemes]),
    trustedDomains: strings(c[KEYCLOAK_KEYS.policyTrustedDomains]),
    profiles: [...(policy.profiles ?? [])],
    enabled: policy.enabled !== false,
  };
}
