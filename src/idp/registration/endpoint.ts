import type { RuntimeConfig } from "../../config/runtime-config.ts";
import { MCP_SCOPES } from "../../contracts/platform.ts";
import { parseTrustedHosts, type RegistrationPolicy } from "./policy.ts";

/** The registration policy the settings describe. */
export function registrationPolicyOf(
  config: Pick<
    RuntimeConfig,
    "dynamicClientRegistration" | "dynamicClientRegistrationHosts" | "dynamicClientRegistrationMaxClients"
  >,
): RegistrationPolicy {
  return {
    mode: config.dynamicClientRegistration,
    trustedHosts: parseTrustedHosts(config.dynamicClientRegistrationHosts),
    mcpScopes: MCP_SCOPES,
    maxClients: config.dynamicClientRegistrationMaxClients,
  };
}

/**
 * The identity provider's own registration endpoint when dynamic client registration is on (what its
 * metadata advertises), else undefined: oidc-provider's `/reg`, Keycloak's OIDC client registration.
 */
export function registrationEndpointOf(
  config: Pick<RuntimeConfig, "dynamicClientRegistration" | "idp" | "issuer">,
): string | undefined {
  if (config.dynamicClientRegistration === "off") return undefined;
  return config.idp === "keycloak"
    ? `${config.issuer}/clients-registrations/openid-connect`
    : `${config.issuer}/reg`;
}
