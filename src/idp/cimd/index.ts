export { isSpecialAddress } from "./address.ts";
export { type CacheBounds, cacheLifetimeSeconds, DEFAULT_CACHE_BOUNDS } from "./cache-lifetime.ts";
export { checkClientIdUrl } from "./client-id.ts";
export { type CimdDiagnosis, diagnoseCimdClient } from "./diagnostics.ts";
export { type ClientMetadataDocument, checkDocument } from "./document.ts";
export {
  type CaOption,
  type CimdDocumentFetcher,
  CimdFetchError,
  type CimdFetcher,
  type CimdFetcherOptions,
  createCimdFetcher,
  type FetchDocumentOptions,
} from "./fetcher.ts";
export {
  fromKeycloakPolicy,
  fromKeycloakProfile,
  KEYCLOAK_KEYS,
  type KeycloakClientPolicy,
  type KeycloakClientProfile,
  toKeycloakPolicy,
  toKeycloakProfile,
} from "./keycloak.ts";
export * from "./model.ts";
export { conditionMatches, type PolicyMatch, selectPolicies } from "./policy.ts";
export { CIMD_PRESETS, type CimdPreset, findPreset, PRESET_IDS } from "./presets.ts";
export { redirectUriMatches } from "./redirect.ts";
export { type CimdContext, type CimdResolution, resolveCimdClient } from "./resolve.ts";
export type { CimdRule, RuleViolation } from "./rules.ts";
