import type ClientRepresentation from "@keycloak/keycloak-admin-client/lib/defs/clientRepresentation.js";
import type ClientScopeRepresentation from "@keycloak/keycloak-admin-client/lib/defs/clientScopeRepresentation.js";
import type ProtocolMapperRepresentation from "@keycloak/keycloak-admin-client/lib/defs/protocolMapperRepresentation.js";
import {
  CONSOLE_CLIENT_ID,
  CONSOLE_CLIENT_NAME,
  consolePostLogoutUri,
  consoleRedirectUri,
} from "../../auth/console-client.ts";
import { MCP_SCOPES, PLATFORM_AUDIENCE, ROLES } from "../../contracts/platform.ts";
import type { RegistrationPolicy } from "../registration/policy.ts";
import { SCOPE_DESCRIPTIONS } from "../scope-descriptions.ts";
import type { KeycloakAdmin } from "./admin.ts";
import { provisionRegistrationPolicies } from "./registration-policies.ts";

/**
 * What the specification says is "created automatically at start-up", made in a Keycloak realm through
 * the Admin REST API. Every step reads first and writes only what is missing or wrong in what the
 * platform owns, so a second run changes nothing and what administrators added stays: other scopes,
 * mappers, clients, roles, user-profile attributes and client policies are never touched.
 */
/** The client scope that gives exchanged tokens the platform contract: aud imaging-api, roles, applications. */
const PLATFORM_SCOPE = "imaging-platform";
export const APPLICATIONS_ATTRIBUTE = "applications";

interface ProvisionOptions {
  realm: string;
  baseUrl: string;
  /** `mcp-token-exchange` unless configured otherwise. */
  exchangeClientId: string;
  /** Used when the confidential client is created; otherwise Keycloak generates one. */
  exchangeClientSecret?: string | undefined;
  /** Keycloak as the gateway reaches it (KEYCLOAK_URL), to read the realm's issuer. */
  keycloakUrl: string;
  /** DYNAMIC_CLIENT_REGISTRATION: Keycloak's registration policies are set when it is on. */
  registration?: RegistrationPolicy | undefined;
}

export interface ProvisionResult {
  /** One line per write; empty when everything was already in place. */
  changes: string[];
  /** Worth telling the administrator: not fixed automatically because it is theirs to decide. */
  warnings: string[];
  /** The secret the gateway exchanges tokens with, as Keycloak holds it. */
  exchangeClientSecret: string;
  /** Whether the realm's discovery advertises client ID metadata documents (feature `cimd`). */
  cimdSupported: boolean;
}

export async function provisionKeycloak(
  admin: KeycloakAdmin,
  options: ProvisionOptions,
): Promise<ProvisionResult> {
  const changes: string[] = [];
  const warnings: string[] = [];
  const { realm } = options;
  admin.setConfig({ realmName: realm });

  await ensureRealm(admin, realm, changes);
  const discovery = await readDiscovery(options);
  await ensureIssuer(admin, options, discovery.issuer, changes, warnings);
  const roles = await ensureRealmRoles(admin, changes);
  await ensureApplicationsAttribute(admin, changes);

  await ensureClient(
    admin,
    {
      clientId: PLATFORM_AUDIENCE,
      name: "imaging-services platform API",
      description: "Audience of platform tokens (managed by imaging-services)",
      protocol: "openid-connect",
      publicClient: false,
      bearerOnly: true,
      standardFlowEnabled: false,
      implicitFlowEnabled: false,
      directAccessGrantsEnabled: false,
      serviceAccountsEnabled: false,
    },
    {},
    changes,
  );
  const exchange = await ensureClient(
    admin,
    {
      clientId: options.exchangeClientId,
      name: "MCP token exchange (imaging-services gateway)",
      description: "Exchanges AI clients' MCP tokens for platform tokens (managed by imaging-services)",
      protocol: "openid-connect",
      publicClient: false,
      clientAuthenticatorType: "client-secret",
      ...(options.exchangeClientSecret ? { secret: options.exchangeClientSecret } : {}),
      standardFlowEnabled: false,
      implicitFlowEnabled: false,
      directAccessGrantsEnabled: false,
      serviceAccountsEnabled: false,
      // Exchanged tokens carry only the platform roles, whatever else the user holds in the realm.
      fullScopeAllowed: false,
    },
    { publicClient: false, attributes: { "standard.token.exchange.enabled": "true" } },
    changes,
  );
  await ensureRoleScope(admin, exchange, roles, changes);

  const platformScope = await ensureClientScope(
    admin,
    PLATFORM_SCOPE,
    "Platform token contract: audience imaging-api, roles and applications (managed by imaging-services)",
    undefined,
    platformMappers(),
    changes,
  );
  await ensureClientDefaultScope(admin, exchange, platformScope, changes);

  const defaultScopes = new Set((await admin.clientScopes.listDefaultClientScopes()).map((s) => s.id));
  const optionalScopes = new Set(
    (await admin.clientScopes.listDefaultOptionalClientScopes()).map((s) => s.id),
  );
  const mcpScopeIds: string[] = [];
  for (const name of MCP_SCOPES) {
    const scope = await ensureClientScope(
      admin,
      name,
      "MCP access through the imaging-services gateway (managed by imaging-services)",
      consentText(name),
      mcpAudienceMappers(options),
      changes,
    );
    // An administrator who made it a realm default scope instead has decided: leave it there.
    if (!defaultScopes.has(scope) && !optionalScopes.has(scope)) {
      await admin.clientScopes.addDefaultOptionalClientScope({ id: scope });
      changes.push(`realm default optional client scope ${name}`);
    }
    mcpScopeIds.push(scope);
  }
  await ensureConsoleClient(admin, options.baseUrl, mcpScopeIds, changes);

  if (options.registration) await provisionRegistrationPolicies(admin, realm, options.registration, changes);

  const secret = await admin.clients.getClientSecret({ id: exchange });
  if (!secret.value) throw new Error(`Keycloak returned no secret for client ${options.exchangeClientId}`);
  const cimdSupported = discovery.client_id_metadata_document_supported === true;
  if (!cimdSupported) {
    warnings.push(
      "Keycloak does not advertise client ID metadata documents: start it with --features=cimd (Keycloak 26.7 or newer)",
    );
  }
  return { changes, warnings, exchangeClientSecret: secret.value, cimdSupported };
}

async function ensureRealm(admin: KeycloakAdmin, realm: string, changes: string[]): Promise<void> {
  const existing = await admin.realms.findOne({ realm });
  if (existing) return;
  await admin.realms.create({ realm, enabled: true, displayName: "imaging-services" });
  changes.push(`realm ${realm}`);
}

/** Realm attribute recording the Frontend URL provisioning set, so it may follow base_url later. */
const MANAGED_FRONTEND_URL = "imaging-services.frontendUrl";

/**
 * AI clients discover the issuer `{base_url}/auth/realms/{realm}` through the gateway. A Keycloak whose
 * hostname is already the gateway's gives it; otherwise (development, no hostname set) the realm's
 * Frontend URL is set to `{base_url}/auth` so browser pages and tokens name the gateway, and follows
 * base_url when it changes. A Frontend URL an administrator set differently is left alone and reported.
 */
async function ensureIssuer(
  admin: KeycloakAdmin,
  options: ProvisionOptions,
  issuer: string,
  changes: string[],
  warnings: string[],
): Promise<void> {
  const expected = `${options.baseUrl}/auth/realms/${options.realm}`;
  if (issuer === expected) return;
  const realm = await admin.realms.findOne({ realm: options.realm });
  const attributes = (realm?.attributes ?? {}) as Record<string, unknown>;
  const frontendUrl = attributes.frontendUrl;
  const ours = frontendUrl === attributes[MANAGED_FRONTEND_URL];
  if (typeof frontendUrl === "string" && frontendUrl !== "" && !ours) {
    warnings.push(
      `the realm's issuer is ${issuer}, not ${expected}: its Frontend URL is ${frontendUrl}; ` +
        `set it to ${options.baseUrl}/auth (or Keycloak's hostname) so tokens name the gateway`,
    );
    return;
  }
  const wanted = `${options.baseUrl}/auth`;
  await admin.realms.update(
    { realm: options.realm },
    { attributes: { frontendUrl: wanted, [MANAGED_FRONTEND_URL]: wanted } },
  );
  changes.push(`realm frontend URL ${wanted} (issuer was ${issuer})`);
}

interface Discovery {
  issuer: string;
  client_id_metadata_document_supported?: boolean;
}

async function readDiscovery(options: ProvisionOptions): Promise<Discovery> {
  const url = `${options.keycloakUrl}/realms/${encodeURIComponent(options.realm)}/.well-known/openid-configuration`;
  const response = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  if (!response.ok) throw new Error(`Keycloak answered ${response.status} to ${url}`);
  return (await response.json()) as Discovery;
}

async function ensureRealmRoles(admin: KeycloakAdmin, changes: string[]) {
  const roles = [];
  for (const name of ROLES) {
    let role = await admin.roles.findOneByName({ name });
    if (!role) {
      await admin.roles.create({
        name,
        description: `imaging-services ${name} (managed by imaging-services)`,
      });
      changes.push(`realm role ${name}`);
      role = await admin.roles.findOneByName({ name });
    }
    if (!role?.id) throw new Error(`Keycloak did not return realm role ${name}`);
    roles.push({ id: role.id, name });
  }
  return roles;
}

/** Keycloak 24+ drops user attributes its user profile does not declare: declare `applications`. */
async function ensureApplicationsAttribute(admin: KeycloakAdmin, changes: string[]): Promise<void> {
  const profile = await admin.users.getProfile();
  const attributes = profile.attributes ?? [];
  if (attributes.some((a) => a.name === APPLICATIONS_ATTRIBUTE)) return;
  await admin.users.updateProfile({
    ...profile,
    attributes: [
      ...attributes,
      {
        name: APPLICATIONS_ATTRIBUTE,
        displayName: "Applications (imaging-services)",
        multivalued: true,
        permissions: { view: ["admin"], edit: ["admin"] },
        validations: { length: { max: 255 } },
      },
    ],
  });
  changes.push(`user profile attribute ${APPLICATIONS_ATTRIBUTE}`);
}

/**
 * Creates the client when missing; when present, enforces only `required` (what the platform cannot
 * work without) and leaves the rest as administrators set it. Returns its internal id.
 */
async function ensureClient(
  admin: KeycloakAdmin,
  create: ClientRepresentation,
  required: Pick<ClientRepresentation, "publicClient" | "attributes">,
  changes: string[],
): Promise<string> {
  const clientId = create.clientId as string;
  const [existing] = await admin.clients.find({ clientId, max: 1 });
  if (!existing?.id) {
    const { id } = await admin.clients.create({
      ...create,
      attributes: { ...create.attributes, ...required.attributes },
    });
    changes.push(`client ${clientId}`);
    return id;
  }
  const wrongAttributes = Object.entries(required.attributes ?? {}).filter(
    ([key, value]) => existing.attributes?.[key] !== value,
  );
  const wrongPublic = required.publicClient !== undefined && existing.publicClient !== required.publicClient;
  if (wrongAttributes.length > 0 || wrongPublic) {
    await admin.clients.update(
      { id: existing.id },
      {
        ...existing,
        ...(required.publicClient !== undefined ? { publicClient: required.publicClient } : {}),
        attributes: { ...existing.attributes, ...Object.fromEntries(wrongAttributes) },
      },
    );
    const what = [
      ...wrongAttributes.map(([key, value]) => `${key}=${value}`),
      ...(wrongPublic ? ["confidential"] : []),
    ];
    changes.push(`client ${clientId}: ${what.join(", ")}`);
  }
  return existing.id;
}

async function ensureRoleScope(
  admin: KeycloakAdmin,
  client: string,
  roles: { id: string; name: string }[],
  changes: string[],
): Promise<void> {
  const mapped = new Set((await admin.clients.listRealmScopeMappings({ id: client })).map((r) => r.name));
  const missing = roles.filter((r) => !mapped.has(r.name));
  if (missing.length === 0) return;
  await admin.clients.addRealmScopeMappings({ id: client }, missing);
  changes.push(`role scope of the exchange client: ${missing.map((r) => r.name).join(", ")}`);
}

/** Creates the scope with its mappers, or adds/corrects the platform's mappers (matched by name) in it. */
async function ensureClientScope(
  admin: KeycloakAdmin,
  name: string,
  description: string,
  consent: string | undefined,
  mappers: ProtocolMapperRepresentation[],
  changes: string[],
): Promise<string> {
  const existing: ClientScopeRepresentation | undefined = await admin.clientScopes.findOneByName({ name });
  if (!existing?.id) {
    await admin.clientScopes.create({
      name,
      description,
      protocol: "openid-connect",
      attributes: {
        "include.in.token.scope": "true",
        "display.on.consent.screen": String(consent !== undefined),
        ...(consent ? { "consent.screen.text": consent } : {}),
      },
      protocolMappers: mappers,
    });
    changes.push(`client scope ${name}`);
    const created = await admin.clientScopes.findOneByName({ name });
    if (!created?.id) throw new Error(`Keycloak did not return client scope ${name}`);
    return created.id;
  }
  const present = await admin.clientScopes.listProtocolMappers({ id: existing.id });
  for (const mapper of mappers) {
    const found = present.find((m) => m.name === mapper.name);
    if (!found) {
      await admin.clientScopes.addProtocolMapper({ id: existing.id }, mapper);
      changes.push(`mapper ${mapper.name} in client scope ${name}`);
    } else if (!sameConfig(found, mapper) && found.id) {
      await admin.clientScopes.updateProtocolMapper(
        { id: existing.id, mapperId: found.id },
        { ...found, ...mapper, id: found.id, config: { ...found.config, ...mapper.config } },
      );
      changes.push(`mapper ${mapper.name} in client scope ${name} (corrected)`);
    }
  }
  return existing.id;
}

/** The embedded provider's consent wording, so users read the same thing with either provider. */
function consentText(scope: string): string {
  const text = SCOPE_DESCRIPTIONS[scope] ?? scope;
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function sameConfig(found: ProtocolMapperRepresentation, wanted: ProtocolMapperRepresentation): boolean {
  if (found.protocolMapper !== wanted.protocolMapper) return false;
  return Object.entries(wanted.config ?? {}).every(([key, value]) => found.config?.[key] === value);
}

async function ensureClientDefaultScope(
  admin: KeycloakAdmin,
  client: string,
  scope: string,
  changes: string[],
): Promise<void> {
  const scopes = await admin.clients.listDefaultClientScopes({ id: client });
  if (scopes.some((s) => s.id === scope)) return;
  await admin.clients.addDefaultClientScope({ id: client, clientScopeId: scope });
  changes.push(`default client scope ${PLATFORM_SCOPE} of the exchange client`);
}

const tokenClaim = {
  "access.token.claim": "true",
  "introspection.token.claim": "true",
  "id.token.claim": "false",
};

/** MCP tokens name the exchange client (Keycloak exchanges only tokens meant for the requester) and both MCP URLs. */
function mcpAudienceMappers(options: ProvisionOptions): ProtocolMapperRepresentation[] {
  const audience = (name: string, config: Record<string, string>): ProtocolMapperRepresentation => ({
    name,
    protocol: "openid-connect",
    protocolMapper: "oidc-audience-mapper",
    config: { ...config, ...tokenClaim },
  });
  return [
    audience(`audience ${options.exchangeClientId}`, {
      "included.client.audience": options.exchangeClientId,
    }),
    audience("audience MCP analysis", { "included.custom.audience": `${options.baseUrl}/mcp` }),
    audience("audience MCP gatekeeper", { "included.custom.audience": `${options.baseUrl}/mcp/gatekeeper` }),
  ];
}

/** The same claims contract as the embedded provider: `roles` (platform realm roles) and `applications`. */
function platformMappers(): ProtocolMapperRepresentation[] {
  return [
    {
      name: `audience ${PLATFORM_AUDIENCE}`,
      protocol: "openid-connect",
      protocolMapper: "oidc-audience-mapper",
      config: { "included.client.audience": PLATFORM_AUDIENCE, ...tokenClaim },
    },
    {
      name: "platform roles",
      protocol: "openid-connect",
      protocolMapper: "oidc-usermodel-realm-role-mapper",
      config: { "claim.name": "roles", multivalued: "true", "jsonType.label": "String", ...tokenClaim },
    },
    {
      name: "platform applications",
      protocol: "openid-connect",
      protocolMapper: "oidc-usermodel-attribute-mapper",
      config: {
        "user.attribute": APPLICATIONS_ATTRIBUTE,
        "claim.name": "applications",
        multivalued: "true",
        "jsonType.label": "String",
        ...tokenClaim,
      },
    },
  ];
}

/**
 * The web console's first-party client: public, authorization code with PKCE (S256), the gateway's
 * callback as its only redirect URI, no consent screen. Redirect URIs follow base_url when it changes.
 */
async function ensureConsoleClient(
  admin: KeycloakAdmin,
  baseUrl: string,
  mcpScopeIds: string[],
  changes: string[],
): Promise<void> {
  const redirectUris = [consoleRedirectUri(baseUrl)];
  const attributes = {
    "pkce.code.challenge.method": "S256",
    "post.logout.redirect.uris": consolePostLogoutUri(baseUrl),
  };
  const id = await ensureClient(
    admin,
    {
      clientId: CONSOLE_CLIENT_ID,
      name: CONSOLE_CLIENT_NAME,
      description: "The web console of imaging-services (managed by imaging-services)",
      protocol: "openid-connect",
      publicClient: true,
      standardFlowEnabled: true,
      implicitFlowEnabled: false,
      directAccessGrantsEnabled: false,
      serviceAccountsEnabled: false,
      consentRequired: false,
      redirectUris,
      webOrigins: ["+"],
    },
    { publicClient: true, attributes },
    changes,
  );
  const current = await admin.clients.findOne({ id });
  if (current && JSON.stringify(current.redirectUris ?? []) !== JSON.stringify(redirectUris)) {
    await admin.clients.update({ id }, { ...current, redirectUris });
    changes.push(`client ${CONSOLE_CLIENT_ID}: redirect URIs ${redirectUris.join(" ")}`);
  }
  // Its access token must be an MCP token (the gateway exchanges it): the mcp:* scopes must be requestable.
  const optional = new Set((await admin.clients.listOptionalClientScopes({ id })).map((s) => s.id));
  const defaults = new Set((await admin.clients.listDefaultClientScopes({ id })).map((s) => s.id));
  for (const scope of mcpScopeIds) {
    if (optional.has(scope) || defaults.has(scope)) continue;
    await admin.clients.addOptionalClientScope({ id, clientScopeId: scope });
    changes.push(`client ${CONSOLE_CLIENT_ID}: optional scope ${scope}`);
  }
}
