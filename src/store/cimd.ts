import type { Kysely, Transaction } from "kysely";
import { nowIso } from "./clock.ts";
import type { CimdClientsTable, CimdPoliciesTable, CimdProfilesTable, Database } from "./schema.ts";

/** The CIMD client-policy records (their rules: src/idp/cimd/model.ts). */
export const CIMD_EXECUTOR = "client-id-metadata-document";
export const CIMD_CONDITION = "client-id-uri";

export interface CimdProfile {
  name: string;
  executor: typeof CIMD_EXECUTOR;
  /** Allow http client_ids and non-loopback http URLs in the document (development only). */
  allowHttpScheme: boolean;
  /** Redirect URIs must be on the client_id's host or one of its subdomains. */
  restrictSameDomain: boolean;
  /** Refuse public clients (token_endpoint_auth_method "none"). */
  onlyAllowConfidentialClient: boolean;
  /** Where documents may be fetched from, and the hosts every URL of a document may use. */
  trustedDomains: string[];
}

export interface CimdPolicy {
  name: string;
  condition: typeof CIMD_CONDITION;
  /** client_id schemes the condition matches: ["https"], or ["https", "http"]. */
  uriSchemes: string[];
  /** Hosts the condition matches: only the client_id's host is compared with them. */
  trustedDomains: string[];
  /** Names of the associated client profiles; without one the policy has no effect. */
  profiles: string[];
  enabled: boolean;
}

/** What one `imaging cimd add` created: the client_id it was given and its profile and policy. */
export interface CimdClient {
  client: string;
  clientId: string;
  profile: string;
  policy: string;
  createdAt: string;
  updatedAt: string;
}

export interface CimdConfig {
  profiles: CimdProfile[];
  policies: CimdPolicy[];
}

type Db = Kysely<Database>;
type CimdDb = Kysely<Database> | Transaction<Database>;

/** A name is taken (add), or a client is unknown (set, link...). */
export class CimdStoreError extends Error {
  override name = "CimdStoreError";
  readonly code: "exists" | "not-found";
  constructor(code: "exists" | "not-found", message: string) {
    super(message);
    this.code = code;
  }
}

function list(json: string): string[] {
  try {
    const value: unknown = JSON.parse(json);
    return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
  } catch {
    return [];
  }
}

const toProfile = (row: CimdProfilesTable): CimdProfile => ({
  name: row.name,
  executor: CIMD_EXECUTOR,
  allowHttpScheme: Number(row.allow_http_scheme) === 1,
  restrictSameDomain: Number(row.restrict_same_domain) === 1,
  onlyAllowConfidentialClient: Number(row.only_allow_confidential_client) === 1,
  trustedDomains: list(row.trusted_domains),
});

const toPolicy = (row: CimdPoliciesTable): CimdPolicy => ({
  name: row.name,
  condition: CIMD_CONDITION,
  uriSchemes: list(row.uri_schemes),
  trustedDomains: list(row.trusted_domains),
  profiles: list(row.profiles),
  enabled: Number(row.enabled) === 1,
});

const toClient = (row: CimdClientsTable): CimdClient => ({
  client: row.client,
  clientId: row.client_id,
  profile: row.profile,
  policy: row.policy,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

const profileRow = (p: CimdProfile, at: string): CimdProfilesTable => ({
  name: p.name,
  executor: CIMD_EXECUTOR,
  allow_http_scheme: p.allowHttpScheme ? 1 : 0,
  restrict_same_domain: p.restrictSameDomain ? 1 : 0,
  only_allow_confidential_client: p.onlyAllowConfidentialClient ? 1 : 0,
  trusted_domains: JSON.stringify(p.trustedDomains),
  updated_at: at,
});

const policyRow = (p: CimdPolicy, at: string): CimdPoliciesTable => ({
  name: p.name,
  condition: CIMD_CONDITION,
  uri_schemes: JSON.stringify(p.uriSchemes),
  trusted_domains: JSON.stringify(p.trustedDomains),
  profiles: JSON.stringify(p.profiles),
  enabled: p.enabled ? 1 : 0,
  updated_at: at,
});

/** Every profile and policy, ordered by name: what the engine enforces. Read it for each request. */
export async function loadCimdConfig(db: Db): Promise<CimdConfig> {
  const c = db;
  const [profiles, policies] = await Promise.all([
    c.selectFrom("cimd_profiles").selectAll().orderBy("name").execute(),
    c.selectFrom("cimd_policies").selectAll().orderBy("name").execute(),
  ]);
  return { profiles: profiles.map(toProfile), policies: policies.map(toPolicy) };
}

async function upsertProfile(db: CimdDb, profile: CimdProfile): Promise<void> {
  const { name, ...rest } = profileRow(profile, nowIso());
  await db
    .insertInto("cimd_profiles")
    .values({ name, ...rest })
    .onConflict((oc) => oc.column("name").doUpdateSet(rest))
    .execute();
}

async function upsertPolicy(db: CimdDb, policy: CimdPolicy): Promise<void> {
  const { name, ...rest } = policyRow(policy, nowIso());
  await db
    .insertInto("cimd_policies")
    .values({ name, ...rest })
    .onConflict((oc) => oc.column("name").doUpdateSet(rest))
    .execute();
}

/** Clients made by `imaging cimd add`, ordered by name. */
export async function listCimdClients(db: Db): Promise<CimdClient[]> {
  const rows = await db.selectFrom("cimd_clients").selectAll().orderBy("client").execute();
  return rows.map(toClient);
}

/** Creates the client with its profile and policy at once; refuses when any of the three exists. */
export async function createCimdClient(
  db: Db,
  input: { client: string; clientId: string; profile: CimdProfile; policy: CimdPolicy },
): Promise<CimdClient> {
  return db.transaction().execute(async (trx) => {
    const existing = await trx
      .selectFrom("cimd_clients")
      .select("client")
      .where("client", "=", input.client)
      .executeTakeFirst();
    if (existing) throw new CimdStoreError("exists", `CIMD client ${input.client} already exists`);
    const profile = await trx
      .selectFrom("cimd_profiles")
      .select("name")
      .where("name", "=", input.profile.name)
      .executeTakeFirst();
    if (profile) throw new CimdStoreError("exists", `client profile ${input.profile.name} already exists`);
    const policy = await trx
      .selectFrom("cimd_policies")
      .select("name")
      .where("name", "=", input.policy.name)
      .executeTakeFirst();
    if (policy) throw new CimdStoreError("exists", `client policy ${input.policy.name} already exists`);
    const at = nowIso();
    await trx.insertInto("cimd_profiles").values(profileRow(input.profile, at)).execute();
    await trx.insertInto("cimd_policies").values(policyRow(input.policy, at)).execute();
    const row = {
      client: input.client,
      client_id: input.clientId,
      profile: input.profile.name,
      policy: input.policy.name,
      created_at: at,
      updated_at: at,
    };
    await trx.insertInto("cimd_clients").values(row).execute();
    return toClient(row);
  });
}

export interface CimdClientState {
  client: CimdClient;
  profile: CimdProfile | undefined;
  policy: CimdPolicy | undefined;
}

async function stateIn(trx: CimdDb, client: string): Promise<CimdClientState> {
  const row = await trx
    .selectFrom("cimd_clients")
    .selectAll()
    .where("client", "=", client)
    .executeTakeFirst();
  if (!row) throw new CimdStoreError("not-found", `No CIMD client named ${client} (see: imaging cimd list)`);
  const profile = await trx
    .selectFrom("cimd_profiles")
    .selectAll()
    .where("name", "=", row.profile)
    .executeTakeFirst();
  const policy = await trx
    .selectFrom("cimd_policies")
    .selectAll()
    .where("name", "=", row.policy)
    .executeTakeFirst();
  return {
    client: toClient(row),
    profile: profile && toProfile(profile),
    policy: policy && toPolicy(policy),
  };
}

/** The client with its profile and policy as stored (either may be missing if removed by other means). */
export async function getCimdClientState(db: Db, client: string): Promise<CimdClientState | undefined> {
  try {
    return await stateIn(db, client);
  } catch (error) {
    if (error instanceof CimdStoreError) return undefined;
    throw error;
  }
}

/**
 * Changes a client in one transaction: `change` receives the stored state and returns what to write
 * (a profile or policy returned is saved whole). Throws CimdStoreError("not-found") for an unknown client.
 */
export async function updateCimdClient(
  db: Db,
  client: string,
  change: (state: CimdClientState) => {
    clientId?: string | undefined;
    profile?: CimdProfile | undefined;
    policy?: CimdPolicy | undefined;
  },
): Promise<CimdClientState> {
  return db.transaction().execute(async (trx) => {
    const state = await stateIn(trx, client);
    const next = change(state);
    const at = nowIso();
    if (next.profile) await upsertProfile(trx, next.profile);
    if (next.policy) await upsertPolicy(trx, next.policy);
    await trx
      .updateTable("cimd_clients")
      .set({ ...(next.clientId === undefined ? {} : { client_id: next.clientId }), updated_at: at })
      .where("client", "=", client)
      .execute();
    return stateIn(trx, client);
  });
}

/** Adds the client's profile to its policy's associated profiles (idempotent). */
export async function linkCimdClient(db: Db, client: string): Promise<CimdClientState> {
  return updateCimdClient(db, client, ({ client: c, policy }) => {
    if (!policy) throw new CimdStoreError("not-found", `client policy ${c.policy} does not exist`);
    return policy.profiles.includes(c.profile)
      ? {}
      : { policy: { ...policy, profiles: [...policy.profiles, c.profile] } };
  });
}

/** Removes the client's profile from its policy's associated profiles: CIMD is then ignored. */
export async function unlinkCimdClient(db: Db, client: string): Promise<CimdClientState> {
  return updateCimdClient(db, client, ({ client: c, policy }) => {
    if (!policy) throw new CimdStoreError("not-found", `client policy ${c.policy} does not exist`);
    return { policy: { ...policy, profiles: policy.profiles.filter((p) => p !== c.profile) } };
  });
}

/** Deletes the client, its profile and its policy; false when there was no such client. */
export async function removeCimdClient(db: Db, client: string): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .selectFrom("cimd_clients")
      .selectAll()
      .where("client", "=", client)
      .executeTakeFirst();
    if (!row) return false;
    await trx.deleteFrom("cimd_policies").where("name", "=", row.policy).execute();
    await trx.deleteFrom("cimd_profiles").where("name", "=", row.profile).execute();
    await trx.deleteFrom("cimd_clients").where("client", "=", client).execute();
    return true;
  });
}
