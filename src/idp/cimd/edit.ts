import { FieldRuleError } from "../../domain/field-rule-error.ts";
import { checkClientIdUrl } from "./client-id.ts";
import {
  CIMD_CONDITION,
  CIMD_EXECUTOR,
  type CimdPolicy,
  type CimdProfile,
  clientNameProblem,
  normalizeHost,
  parseDomainList,
  policyNameOf,
  profileNameOf,
  trustedDomainProblem,
  variantSettings,
} from "./model.ts";
import { findPreset, PRESET_IDS } from "./presets.ts";
import type { CimdClientChange, CimdClientState } from "./repository.ts";
import type { CimdRule } from "./rules.ts";

/** The rules of an edit, beside the client_id rules of the profile (rules.ts). */
type CimdEditRule =
  | CimdRule
  | "client-name"
  | "preset-unknown"
  | "client-id-required"
  | "domain-list-empty"
  | "trusted-domain"
  | "nothing-to-change"
  | "profile-missing"
  | "policy-missing";

/** A refused edit: the input field at fault, the rule it breaks and a sentence naming the rule. */
export class CimdEditError extends FieldRuleError<CimdEditRule> {
  override name = "CimdEditError";
}

interface NewCimdClientInput {
  client?: string | undefined;
  preset?: string | undefined;
  clientId?: string | undefined;
  /** Profile trusted domains (default: the preset's, else the client_id's host, localhost, 127.0.0.1). */
  trustedDomains?: readonly string[] | undefined;
  /** Policy trusted domains (default: the preset's, else the client_id's host). */
  policyDomains?: readonly string[] | undefined;
  /** The HTTP variant (development only). */
  http?: boolean | undefined;
}

interface CimdSwitches {
  clientId?: string | undefined;
  trustedDomains?: readonly string[] | undefined;
  policyDomains?: readonly string[] | undefined;
  /** true: HTTP variant, false: HTTPS variant. */
  http?: boolean | undefined;
  enabled?: boolean | undefined;
  restrictSameDomain?: boolean | undefined;
  onlyAllowConfidentialClient?: boolean | undefined;
}

function checkName(client: string): void {
  const problem = clientNameProblem(client);
  if (problem) throw new CimdEditError("client", "client-name", problem);
}

/** A domain list as given (entries trimmed, lower-cased, duplicates dropped), each entry checked. */
export function checkedDomains(field: string, domains: readonly string[]): string[] {
  const list = parseDomainList(domains.join(","));
  if (list.length === 0)
    throw new CimdEditError(
      field,
      "domain-list-empty",
      `${field} must list at least one domain (an empty list refuses every client)`,
    );
  for (const domain of list) {
    const problem = trustedDomainProblem(domain);
    if (problem) throw new CimdEditError(field, "trusted-domain", `${field}: ${problem}`);
  }
  return list;
}

function checkedClientId(clientId: string, http: boolean): URL {
  const checked = checkClientIdUrl(clientId, { allowHttpScheme: http });
  if (checked.ok) return checked.url;
  const message =
    checked.rule === "client-id-scheme" && clientId.startsWith("http:")
      ? "client_id must use https, or choose the HTTP variant (development only)"
      : checked.description;
  throw new CimdEditError("clientId", checked.rule, message);
}

/**
 * The profile and policy `imaging cimd add` creates, linked: from a preset or by hand, HTTPS variant
 * unless `http`. Throws CimdEditError naming the field and rule.
 */
export function planNewCimdClient(input: NewCimdClientInput): {
  client: string;
  clientId: string;
  profile: CimdProfile;
  policy: CimdPolicy;
} {
  const preset = input.preset === undefined ? undefined : findPreset(input.preset);
  if (input.preset !== undefined && !preset)
    throw new CimdEditError(
      "preset",
      "preset-unknown",
      `preset must be ${PRESET_IDS.join(" or ")}, got '${input.preset}'`,
    );
  const client = input.client ?? preset?.id;
  if (client === undefined)
    throw new CimdEditError("client", "client-name", "client (a short name, e.g. claude-code) is required");
  checkName(client);
  const clientId = input.clientId ?? preset?.clientId;
  if (clientId === undefined)
    throw new CimdEditError(
      "clientId",
      "client-id-required",
      `clientId is required (or a preset: ${PRESET_IDS.join(", ")})`,
    );
  const http = Boolean(input.http);
  const host = normalizeHost(checkedClientId(clientId, http).hostname);
  const trustedDomains =
    input.trustedDomains !== undefined
      ? checkedDomains("trustedDomains", input.trustedDomains)
      : (preset?.trustedDomains ?? [...new Set([host, "localhost", "127.0.0.1"])]);
  const policyDomains =
    input.policyDomains !== undefined
      ? checkedDomains("policyDomains", input.policyDomains)
      : (preset?.policyDomains ?? [host]);
  const variant = variantSettings(http);
  const profile: CimdProfile = {
    name: profileNameOf(client),
    executor: CIMD_EXECUTOR,
    allowHttpScheme: variant.allowHttpScheme,
    restrictSameDomain: false,
    onlyAllowConfidentialClient: false,
    trustedDomains: [...trustedDomains],
  };
  const policy: CimdPolicy = {
    name: policyNameOf(client),
    condition: CIMD_CONDITION,
    uriSchemes: variant.uriSchemes,
    trustedDomains: [...policyDomains],
    profiles: [profile.name],
    enabled: true,
  };
  return { client, clientId, profile, policy };
}

/**
 * The change `imaging cimd set` makes to a client's current profile and policy; the domain lists are
 * checked before, with checkedDomains. Throws CimdEditError naming the field and rule.
 */
export function planCimdChange(current: CimdClientState, switches: CimdSwitches): CimdClientChange {
  const { trustedDomains, policyDomains, restrictSameDomain, onlyAllowConfidentialClient, enabled } =
    switches;
  const variant = switches.http === undefined ? undefined : variantSettings(switches.http);
  if (Object.values(switches).every((v) => v === undefined))
    throw new CimdEditError("", "nothing-to-change", "nothing to change: give at least one setting");
  const http = variant ? variant.allowHttpScheme : (current.profile?.allowHttpScheme ?? false);
  if (switches.clientId !== undefined) checkedClientId(switches.clientId, http);
  const profile = current.profile && {
    ...current.profile,
    ...(trustedDomains ? { trustedDomains: [...trustedDomains] } : {}),
    ...(variant ? { allowHttpScheme: variant.allowHttpScheme } : {}),
    ...(restrictSameDomain === undefined ? {} : { restrictSameDomain }),
    ...(onlyAllowConfidentialClient === undefined ? {} : { onlyAllowConfidentialClient }),
  };
  const policy = current.policy && {
    ...current.policy,
    ...(policyDomains ? { trustedDomains: [...policyDomains] } : {}),
    ...(variant ? { uriSchemes: variant.uriSchemes } : {}),
    ...(enabled === undefined ? {} : { enabled }),
  };
  const profileChange =
    trustedDomains ||
    variant ||
    restrictSameDomain !== undefined ||
    onlyAllowConfidentialClient !== undefined;
  if (profileChange && !profile)
    throw new CimdEditError(
      "",
      "profile-missing",
      `profile ${current.client.profile} is missing: remove and add the client again`,
    );
  if ((policyDomains || variant || enabled !== undefined) && !policy)
    throw new CimdEditError(
      "",
      "policy-missing",
      `policy ${current.client.policy} is missing: remove and add the client again`,
    );
  return { clientId: switches.clientId, profile, policy };
}
