import type ComponentRepresentation from "@keycloak/keycloak-admin-client/lib/defs/componentRepresentation.js";
import { MCP_SCOPES } from "../../contracts/platform.ts";
import type { RegistrationPolicy } from "../registration/policy.ts";
import type { KeycloakAdmin } from "./admin.ts";

const POLICY_TYPE = "org.keycloak.services.clientregistration.policy.ClientRegistrationPolicy";
/** Client profile and policy (Realm Settings > Client Policies) applied to anonymous registrations. */
export const REGISTERED_CLIENTS_PROFILE = "imaging-registered-clients";
export const REGISTERED_CLIENTS_POLICY = "imaging-registered-clients";

/** Loopback hosts as Keycloak's Trusted Hosts policy compares them (the redirect URIs' host names). */
const LOOPBACK = ["localhost", "127.0.0.1", "::1"];

/** Keycloak keeps multivalued settings in its own order. */
const same = (a: readonly string[] | undefined, b: readonly string[]) =>
  a !== undefined && a.length === b.length && b.every((v) => a.includes(v));

/**
 * DYNAMIC_CLIENT_REGISTRATION on Keycloak, made at start-up through the Admin API when the mode is on
 * (off: nothing is touched unless it was on before, see closeRegistration). The same rules as
 * the embedded provider, mapped onto what Keycloak has:
 * - anonymous Client Registration Policies: Trusted Hosts accepts any sender but only redirect URIs on
 *   loopback (and the trusted hosts); Allowed Client Scopes allows the `mcp:*` scopes (and the realm's
 *   default ones, offline_access among them); Max Clients Limit is DYNAMIC_CLIENT_REGISTRATION_MAX_CLIENTS
 *   (default 200, Keycloak's own default; Keycloak counts every client of the realm);
 * - a client policy for anonymous registrations (condition client-updater-context ByAnonymous) whose
 *   profile enforces PKCE S256 and rejects the implicit and password grants.
 * Every step reads first and writes only what differs; other components, profiles and policies stay.
 * The gateway applies the rest of the policy (public clients only, grant types, sizes, rate limit) in
 * front of Keycloak's registration endpoint (src/gateway/keycloak-proxy.ts).
 */
export async function provisionRegistrationPolicies(
  admin: KeycloakAdmin,
  realm: string,
  policy: RegistrationPolicy,
  changes: string[],
): Promise<void> {
  const realmRep = await admin.realms.findOne({ realm });
  const parent = realmRep?.id;
  if (!parent) throw new Error(`Keycloak did not return realm ${realm}`);
  const components: ComponentRepresentation[] = await admin.components.find({ type: POLICY_TYPE, parent });
  const anonymous = components.filter((c) => c.subType === "anonymous");
  if (policy.mode === "off") return closeRegistration(admin, realm, anonymous, changes);

  const hosts = [...LOOPBACK, ...(policy.mode === "trusted-hosts" ? policy.trustedHosts : [])];
  const trustedHosts = {
    "trusted-hosts": hosts,
    "host-sending-registration-request-must-match": ["false"],
    "client-uris-must-match": ["true"],
  };
  const scopes = {
    "allowed-client-scopes": [...MCP_SCOPES],
    "allow-default-scopes": ["true"],
  };
  const wanted: { providerId: string; name: string; config: Record<string, string[]> }[] = [
    { providerId: "trusted-hosts", name: "Trusted Hosts", config: trustedHosts },
    { providerId: "allowed-client-templates", name: "Allowed Client Scopes", config: scopes },
    ...(policy.maxClients === undefined
      ? []
      : [
          {
            providerId: "max-clients",
            name: "Max Clients Limit",
            config: { "max-clients": [String(policy.maxClients)] },
          },
        ]),
  ];
  for (const want of wanted) {
    const found = anonymous.filter((c) => c.providerId === want.providerId);
    if (found.length === 0) {
      await admin.components.create({
        name: want.name,
        providerId: want.providerId,
        providerType: POLICY_TYPE,
        subType: "anonymous",
        parentId: parent,
        config: want.config,
      });
      changes.push(`anonymous client registration policy ${want.name}`);
      continue;
    }
    for (const component of found) {
      const config = (component.config ?? {}) as Record<string, string[]>;
      const wrong = Object.entries(want.config).filter(([key, value]) => !same(config[key], value));
      if (wrong.length === 0 || !component.id) continue;
      await admin.components.update(
        { id: component.id },
        { ...component, config: { ...config, ...Object.fromEntries(wrong) } },
      );
      changes.push(
        `anonymous client registration policy ${component.name}: ${wrong.map(([k, v]) => `${k}=${v.join(",")}`).join("; ")}`,
      );
    }
  }
  await ensureRegisteredClientsPolicy(admin, realm, policy, changes);
}

/** A Java regex matching a URI on one of these hosts with this scheme, any port, any path. */
const uriPattern = (scheme: "http" | "https", hosts: readonly string[]) =>
  `(?i)^${scheme}://(?:${hosts.map((h) => h.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|")})(?::[0-9]+)?(?:[/?].*)?$`;

/**
 * What the client profile of registered clients enforces: PKCE S256, no implicit or password grant,
 * and the redirect policy on every URI the browser is sent to (Keycloak's Trusted Hosts policy checks
 * the redirect URIs' hosts, not their scheme, and not the post-logout redirect URIs at all: a client
 * registering straight at Keycloak, or updating itself with its registration access token, could make
 * the sign-out page an open redirect). URIs Keycloak itself would call are refused: the
 * secure-client-uris-pattern executor refuses every URI of its fields when it has no pattern.
 */
function registeredClientsExecutors(policy: RegistrationPolicy) {
  const allowed = [
    uriPattern("http", ["127.0.0.1", "localhost", "[::1]"]),
    ...(policy.mode === "trusted-hosts" && policy.trustedHosts.length > 0
      ? [uriPattern("https", policy.trustedHosts)]
      : []),
  ];
  return [
    { executor: "pkce-enforcer", configuration: { "auto-configure": "true" } },
    { executor: "reject-implicit-grant", configuration: { "auto-configure": "true" } },
    { executor: "reject-ropc-grant", configuration: { "auto-configure": "true" } },
    {
      executor: "secure-client-uris-pattern",
      configuration: {
        "client-uri-fields": ["redirectUris", "postLogoutRedirectUris"],
        "allowed-patterns": allowed,
      },
    },
    {
      executor: "secure-client-uris-pattern",
      configuration: {
        "client-uri-fields": [
          "backchannelLogoutUrl",
          "requestUris",
          "sectorIdentifierUri",
          "cibaClientNotificationEndpoint",
          "jwksUri",
        ],
        "allowed-patterns": [],
      },
    },
  ];
}

/** Registrations, and updates with the registration access token Keycloak gives each registered client. */
const REGISTERED_CLIENTS_CONDITION = {
  condition: "client-updater-context",
  configuration: { "update-client-source": ["ByAnonymous", "ByRegistrationAccessToken"] },
};

/** JSON with object keys sorted: Keycloak gives back what it was given in its own key order. */
const canonical = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b)))
      : v,
  );
const sameJson = (a: unknown, b: unknown) => canonical(a) === canonical(b);

async function ensureRegisteredClientsPolicy(
  admin: KeycloakAdmin,
  realm: string,
  policy: RegistrationPolicy,
  changes: string[],
) {
  const executors = registeredClientsExecutors(policy);
  const profiles =
    (await admin.clientPolicies.listProfiles({ realm, includeGlobalProfiles: false })).profiles ?? [];
  const profile = profiles.find((p) => p.name === REGISTERED_CLIENTS_PROFILE);
  if (!profile || !sameJson(profile.executors, executors)) {
    await admin.clientPolicies.createProfiles({
      realm,
      profiles: [
        ...profiles.filter((p) => p.name !== REGISTERED_CLIENTS_PROFILE),
        {
          name: REGISTERED_CLIENTS_PROFILE,
          description:
            "Dynamically registered clients: PKCE S256, no implicit or password grant, redirect and post-logout URIs under the registration policy (managed by imaging-services)",
          executors,
        },
      ],
    });
    changes.push(`client profile ${REGISTERED_CLIENTS_PROFILE}${profile ? " (executors updated)" : ""}`);
  }
  const policies =
    (await admin.clientPolicies.listPolicies({ realm, includeGlobalPolicies: false })).policies ?? [];
  const existing = policies.find((p) => p.name === REGISTERED_CLIENTS_POLICY);
  if (!existing || !sameJson(existing.conditions, [REGISTERED_CLIENTS_CONDITION])) {
    await admin.clientPolicies.updatePolicy({
      realm,
      policies: [
        ...policies.filter((p) => p.name !== REGISTERED_CLIENTS_POLICY),
        {
          name: REGISTERED_CLIENTS_POLICY,
          description:
            "Clients registered anonymously (DYNAMIC_CLIENT_REGISTRATION, managed by imaging-services)",
          enabled: true,
          conditions: [REGISTERED_CLIENTS_CONDITION],
          profiles: [REGISTERED_CLIENTS_PROFILE],
        },
      ],
    });
    changes.push(`client policy ${REGISTERED_CLIENTS_POLICY}${existing ? " (conditions updated)" : ""}`);
  }
}

/**
 * Registration turned off again: only when our client policy shows it was on (else nothing is
 * touched), Keycloak's default anonymous Trusted Hosts rule comes back (no trusted host, the sender
 * must be one: anonymous registration refused) and our client profile and policy go.
 */
async function closeRegistration(
  admin: KeycloakAdmin,
  realm: string,
  anonymous: ComponentRepresentation[],
  changes: string[],
): Promise<void> {
  const policies =
    (await admin.clientPolicies.listPolicies({ realm, includeGlobalPolicies: false })).policies ?? [];
  if (!policies.some((p) => p.name === REGISTERED_CLIENTS_POLICY)) return;
  for (const component of anonymous.filter((c) => c.providerId === "trusted-hosts")) {
    if (!component.id) continue;
    await admin.components.update(
      { id: component.id },
      {
        ...component,
        config: {
          ...component.config,
          "trusted-hosts": [],
          "host-sending-registration-request-must-match": ["true"],
          "client-uris-must-match": ["true"],
        },
      },
    );
    changes.push(
      `anonymous client registration policy ${component.name}: no trusted host (registration off)`,
    );
  }
  await admin.clientPolicies.updatePolicy({
    realm,
    policies: policies.filter((p) => p.name !== REGISTERED_CLIENTS_POLICY),
  });
  const profiles =
    (await admin.clientPolicies.listProfiles({ realm, includeGlobalProfiles: false })).profiles ?? [];
  await admin.clientPolicies.createProfiles({
    realm,
    profiles: profiles.filter((p) => p.name !== REGISTERED_CLIENTS_PROFILE),
  });
  changes.push(`client policy and profile ${REGISTERED_CLIENTS_POLICY} removed (registration off)`);
}
