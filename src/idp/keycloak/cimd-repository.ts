import { isDeepStrictEqual } from "node:util";
import type ClientPolicyRepresentation from "@keycloak/keycloak-admin-client/lib/defs/clientPolicyRepresentation.js";
import type ClientProfileRepresentation from "@keycloak/keycloak-admin-client/lib/defs/clientProfileRepresentation.js";
import {
  CIMD_CONDITION,
  CIMD_EXECUTOR,
  type CimdClient,
  type CimdClientState,
  type CimdConfig,
  type CimdPolicy,
  type CimdProfile,
  CimdStoreError,
} from "../../store/cimd.ts";
import { nowIso } from "../../store/clock.ts";
import {
  fromKeycloakPolicy,
  fromKeycloakProfile,
  type KeycloakClientPolicy,
  type KeycloakClientProfile,
  toKeycloakPolicy,
  toKeycloakProfile,
} from "../cimd/keycloak.ts";
import { policyNameOf, profileNameOf } from "../cimd/model.ts";
import type { CimdClientChange, CimdRepository } from "../cimd/repository.ts";
import type { KeycloakAdmin } from "./admin.ts";

/**
 * The client_id of a pair made outside `imaging cimd` (Keycloak's console): Keycloak keeps no
 * client_id for a profile/policy pair, only `imaging cimd add` records one (in the profile's
 * description). Diagnoses then skip the client_id checks; `imaging cimd set <client> --client-id`
 * records one.
 */
export const UNKNOWN_CLIENT_ID = "";

/** Attribute of the clients Keycloak makes from a client metadata document (their cache expiry). */
const CIMD_CACHE_ATTRIBUTE = "cimd.cache.expiry.time.in.sec";

/**
 * Marks in a profile's description (in the policy's when there is no profile):
 * `client_id=<url> created=<iso> updated=<iso>`. Keycloak has no place of its own for a client_id.
 */
const MARK = { clientId: "client_id", created: "created", updated: "updated" } as const;

type Mark = keyof typeof MARK;

function readMark(description: string | undefined, mark: Mark): string | undefined {
  const match = new RegExp(`(?:^|\\s)${MARK[mark]}=(\\S+)`).exec(description ?? "");
  return match?.[1];
}

/** Sets or adds the marks, leaving the rest of the description (an administrator's words) as it is. */
function writeMarks(description: string | undefined, marks: Partial<Record<Mark, string>>): string {
  let text = description ?? "";
  for (const [mark, value] of Object.entries(marks) as [Mark, string | undefined][]) {
    if (value === undefined || /\s/.test(value)) continue;
    const pattern = new RegExp(`(^|\\s)${MARK[mark]}=\\S+`);
    text = pattern.test(text)
      ? text.replace(pattern, `$1${MARK[mark]}=${value}`)
      : `${text}${text === "" ? "" : " "}${MARK[mark]}=${value}`;
  }
  return text;
}

/** The realm's own entries, as Keycloak returned them (unknown fields kept for the write-back). */
interface Snapshot {
  profiles: ClientProfileRepresentation[];
  policies: ClientPolicyRepresentation[];
}

const PROFILE_PREFIX = profileNameOf("");
const POLICY_PREFIX = policyNameOf("");

const configurationOf = (entry: { configuration?: object }) =>
  (entry.configuration ?? {}) as Record<string, unknown>;

/** The CIMD part of a profile as the model has it, or undefined without a CIMD executor. */
const asProfile = (p: ClientProfileRepresentation): CimdProfile | undefined =>
  fromKeycloakProfile({
    name: p.name ?? "",
    executors: (p.executors ?? []).map((e) => ({
      executor: e.executor ?? "",
      configuration: configurationOf(e),
    })),
  });

/** The CIMD part of a policy as the model has it, or undefined without a client-id-uri condition. */
const asPolicy = (p: ClientPolicyRepresentation): CimdPolicy | undefined =>
  fromKeycloakPolicy({
    name: p.name ?? "",
    enabled: p.enabled !== false,
    conditions: (p.conditions ?? []).map((c) => ({
      condition: c.condition ?? "",
      configuration: configurationOf(c),
    })),
    profiles: p.profiles ?? [],
  });

export interface KeycloakCimdRepository extends CimdRepository {
  /**
   * Every profile name a policy may associate: the realm's profiles, CIMD or not, and Keycloak's
   * global ones. A policy naming anything else is refused by Keycloak.
   */
  profileNames(): Promise<string[]>;
}

/**
 * The CIMD profiles and policies of a Keycloak realm (Realm Settings > Client Policies), through the
 * Admin REST API. A client is the pair `cimd-profile-<client>` / `cimd-policy-<client>`. Each write
 * reads the lists, changes only the entries of the client at hand and PUTs the whole list back
 * (Keycloak replaces it): the realm's other profiles and policies stay as they were, in their order,
 * and the built-in global ones are never written. Profiles are written before a policy naming them,
 * policies before the profiles they stop naming, as Keycloak checks a policy's profiles on write.
 * Two administrators writing at the same instant can still lose one write: Keycloak offers no lock.
 */
export function keycloakCimdRepository(admin: KeycloakAdmin, realm: string): KeycloakCimdRepository {
  const location = `Keycloak realm ${realm}`;

  const read = async (): Promise<Snapshot> => {
    const [profiles, policies] = await Promise.all([
      admin.clientPolicies.listProfiles({ realm, includeGlobalProfiles: false }),
      admin.clientPolicies.listPolicies({ realm, includeGlobalPolicies: false }),
    ]);
    return { profiles: profiles.profiles ?? [], policies: policies.policies ?? [] };
  };
  // Only the realm's own lists are sent: globalProfiles/globalPolicies are Keycloak's built-ins.
  const writeProfiles = (profiles: ClientProfileRepresentation[]) =>
    admin.clientPolicies.createProfiles({ realm, profiles });
  const writePolicies = (policies: ClientPolicyRepresentation[]) =>
    admin.clientPolicies.updatePolicy({ realm, policies });

  /**
   * Keycloak keeps a client made from a client_id's document (persistent CIMD) and serves later
   * requests from it without consulting the policies until its cache time runs out (300 s at least).
   * Dropping those clients after a change makes the next request follow the new rules, as the
   * embedded provider does; the AI client then signs in again. Clients made by hand are never dropped.
   */
  const dropCachedClients = async (clientIds: readonly string[]) => {
    for (const clientId of new Set(clientIds)) {
      if (clientId === UNKNOWN_CLIENT_ID) continue;
      const found = await admin.clients.find({ realm, clientId });
      for (const c of found)
        if (c.id && c.clientId === clientId && c.attributes?.[CIMD_CACHE_ATTRIBUTE] !== undefined)
          await admin.clients.del({ realm, id: c.id });
    }
  };

  const clientNames = (snapshot: Snapshot): string[] => {
    const names = new Set<string>();
    for (const p of snapshot.profiles)
      if (p.name?.startsWith(PROFILE_PREFIX) && asProfile(p)) names.add(p.name.slice(PROFILE_PREFIX.length));
    for (const p of snapshot.policies)
      if (p.name?.startsWith(POLICY_PREFIX) && asPolicy(p)) names.add(p.name.slice(POLICY_PREFIX.length));
    return [...names].filter((n) => n !== "").sort();
  };

  const stateIn = (snapshot: Snapshot, client: string): CimdClientState | undefined => {
    if (!clientNames(snapshot).includes(client)) return undefined;
    const rawProfile = snapshot.profiles.find((p) => p.name === profileNameOf(client));
    const rawPolicy = snapshot.policies.find((p) => p.name === policyNameOf(client));
    const mark = (m: Mark) => readMark(rawProfile?.description, m) ?? readMark(rawPolicy?.description, m);
    // Each write marks the entries it wrote: the client changed when the later of them did.
    const updated = [
      readMark(rawProfile?.description, "updated"),
      readMark(rawPolicy?.description, "updated"),
    ]
      .filter((u): u is string => u !== undefined)
      .sort()
      .at(-1);
    return {
      client: {
        client,
        clientId: mark("clientId") ?? UNKNOWN_CLIENT_ID,
        profile: profileNameOf(client),
        policy: policyNameOf(client),
        createdAt: mark("created") ?? "",
        updatedAt: updated ?? "",
      },
      profile: rawProfile && asProfile(rawProfile),
      policy: rawPolicy && asPolicy(rawPolicy),
    };
  };

  const requireState = (snapshot: Snapshot, client: string): CimdClientState => {
    const state = stateIn(snapshot, client);
    if (!state)
      throw new CimdStoreError("not-found", `No CIMD client named ${client} (see: imaging cimd list)`);
    return state;
  };

  const updateClient = async (
    client: string,
    change: (state: CimdClientState) => CimdClientChange,
  ): Promise<CimdClientState> => {
    const snapshot = await read();
    const state = requireState(snapshot, client);
    const asked = change(state);
    // Entries whose CIMD settings stay the same are not rewritten: the console's spelling of them stays.
    const next: CimdClientChange = {
      clientId: asked.clientId,
      profile: asked.profile && !isDeepStrictEqual(asked.profile, state.profile) ? asked.profile : undefined,
      policy: asked.policy && !isDeepStrictEqual(asked.policy, state.policy) ? asked.policy : undefined,
    };
    const at = nowIso();
    const marks = { ...(next.clientId === undefined ? {} : { clientId: next.clientId }), updated: at };
    const profileName = profileNameOf(client);
    const policyName = policyNameOf(client);
    const hasProfile = snapshot.profiles.some((p) => p.name === profileName);
    // The marks live in the profile; in the policy only when there is no profile to hold them.
    const marksInProfile = hasProfile || next.profile !== undefined;

    let profiles: ClientProfileRepresentation[] | undefined;
    if (next.profile || (marksInProfile && next.clientId !== undefined)) {
      profiles = upsert(snapshot.profiles, profileName, (current) => {
        const merged = next.profile ? mergeProfile(current, next.profile) : (current ?? {});
        return { ...merged, description: writeMarks(merged.description, marks) };
      });
    }
    let policies: ClientPolicyRepresentation[] | undefined;
    if (next.policy || (!marksInProfile && next.clientId !== undefined)) {
      policies = upsert(snapshot.policies, policyName, (current) => {
        const merged = next.policy ? mergePolicy(current, next.policy) : (current ?? {});
        return {
          ...merged,
          description: writeMarks(merged.description, marksInProfile ? { updated: at } : marks),
        };
      });
    }
    if (profiles) await writeProfiles(profiles);
    if (policies) await writePolicies(policies);
    const after = requireState(await read(), client);
    if (profiles || policies) await dropCachedClients([state.client.clientId, after.client.clientId]);
    return after;
  };

  return {
    location,

    async profileNames() {
      const listed = await admin.clientPolicies.listProfiles({ realm, includeGlobalProfiles: true });
      return [...(listed.profiles ?? []), ...(listed.globalProfiles ?? [])]
        .map((p) => p.name)
        .filter((n): n is string => n !== undefined);
    },

    async loadConfig(): Promise<CimdConfig> {
      const snapshot = await read();
      return {
        profiles: snapshot.profiles.map(asProfile).filter((p): p is CimdProfile => p !== undefined),
        policies: snapshot.policies.map(asPolicy).filter((p): p is CimdPolicy => p !== undefined),
      };
    },

    async listClients(): Promise<CimdClient[]> {
      const snapshot = await read();
      return clientNames(snapshot).map((name) => (stateIn(snapshot, name) as CimdClientState).client);
    },

    async getClientState(client) {
      return stateIn(await read(), client);
    },

    async createClient(input) {
      const snapshot = await read();
      if (stateIn(snapshot, input.client))
        throw new CimdStoreError("exists", `CIMD client ${input.client} already exists in ${location}`);
      if (snapshot.profiles.some((p) => p.name === input.profile.name))
        throw new CimdStoreError(
          "exists",
          `client profile ${input.profile.name} already exists in ${location}`,
        );
      if (snapshot.policies.some((p) => p.name === input.policy.name))
        throw new CimdStoreError(
          "exists",
          `client policy ${input.policy.name} already exists in ${location}`,
        );
      const at = nowIso();
      const profile = toKeycloakProfile(input.profile);
      profile.description = writeMarks(profile.description, {
        clientId: input.clientId,
        created: at,
        updated: at,
      });
      await writeProfiles([...snapshot.profiles, profile]);
      try {
        await writePolicies([...snapshot.policies, toKeycloakPolicy(input.policy)]);
      } catch (error) {
        // Do not leave a profile behind that the next `add` would call taken.
        const now = await read().catch(() => undefined);
        if (now)
          await writeProfiles(now.profiles.filter((p) => p.name !== profile.name)).catch(() => undefined);
        throw error;
      }
      return {
        client: input.client,
        clientId: input.clientId,
        profile: input.profile.name,
        policy: input.policy.name,
        createdAt: at,
        updatedAt: at,
      };
    },

    updateClient,

    linkClient(client) {
      return updateClient(client, ({ client: c, policy }) => {
        if (!policy)
          throw new CimdStoreError("not-found", `client policy ${c.policy} does not exist in ${location}`);
        return policy.profiles.includes(c.profile)
          ? {}
          : { policy: { ...policy, profiles: [...policy.profiles, c.profile] } };
      });
    },

    unlinkClient(client) {
      return updateClient(client, ({ client: c, policy }) => {
        if (!policy)
          throw new CimdStoreError("not-found", `client policy ${c.policy} does not exist in ${location}`);
        return { policy: { ...policy, profiles: policy.profiles.filter((p) => p !== c.profile) } };
      });
    },

    async removeClient(client) {
      const snapshot = await read();
      const state = stateIn(snapshot, client);
      if (!state) return false;
      const profileName = profileNameOf(client);
      const policyName = policyNameOf(client);
      // Keycloak refuses every later policy write while a policy names a missing profile.
      const users = snapshot.policies.filter(
        (p) => p.name !== policyName && p.profiles?.includes(profileName),
      );
      if (users.length > 0)
        throw new CimdStoreError(
          "exists",
          `client profile ${profileName} is also an associated profile of ${users.map((p) => `policy ${p.name}`).join(", ")} in ${location}: remove it there first`,
        );
      if (snapshot.policies.some((p) => p.name === policyName))
        await writePolicies(snapshot.policies.filter((p) => p.name !== policyName));
      if (snapshot.profiles.some((p) => p.name === profileName))
        await writeProfiles(snapshot.profiles.filter((p) => p.name !== profileName));
      await dropCachedClients([state.client.clientId]);
      return true;
    },
  };
}

/** The list with the named entry replaced in place, or appended when absent. */
function upsert<T extends { name?: string }>(
  list: T[],
  name: string,
  make: (current: T | undefined) => T,
): T[] {
  const index = list.findIndex((e) => e.name === name);
  if (index === -1) return [...list, { ...make(undefined), name }];
  return list.map((e, i) => (i === index ? { ...make(e), name } : e));
}

/**
 * The profile with its CIMD executor's configuration set from `profile`; its other executors and the
 * executor's other keys (an administrator's additions, newer Keycloak options) stay.
 */
function mergeProfile(
  current: ClientProfileRepresentation | undefined,
  profile: CimdProfile,
): ClientProfileRepresentation {
  const wanted = toKeycloakProfile(profile) as KeycloakClientProfile;
  const configuration = wanted.executors[0]?.configuration ?? {};
  if (!current) return wanted;
  const executors = current.executors ?? [];
  const index = executors.findIndex((e) => e.executor === CIMD_EXECUTOR);
  return {
    ...current,
    executors:
      index === -1
        ? [...executors, { executor: CIMD_EXECUTOR, configuration }]
        : executors.map((e, i) =>
            i === index ? { ...e, configuration: { ...(e.configuration ?? {}), ...configuration } } : e,
          ),
  };
}

/**
 * The policy with its `client-id-uri` condition's configuration, its associated profiles and its
 * switch set from `policy`; its other conditions and fields stay.
 */
function mergePolicy(
  current: ClientPolicyRepresentation | undefined,
  policy: CimdPolicy,
): ClientPolicyRepresentation {
  const wanted = toKeycloakPolicy(policy) as KeycloakClientPolicy;
  const configuration = wanted.conditions[0]?.configuration ?? {};
  if (!current) return wanted;
  const conditions = current.conditions ?? [];
  const index = conditions.findIndex((c) => c.condition === CIMD_CONDITION);
  return {
    ...current,
    enabled: policy.enabled,
    profiles: [...policy.profiles],
    conditions:
      index === -1
        ? [...conditions, { condition: CIMD_CONDITION, configuration }]
        : conditions.map((c, i) =>
            i === index ? { ...c, configuration: { ...(c.configuration ?? {}), ...configuration } } : c,
          ),
  };
}
