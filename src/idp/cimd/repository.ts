import type { Kysely } from "kysely";
import {
  type CimdClientState,
  createCimdClient,
  getCimdClientState,
  linkCimdClient,
  listCimdClients,
  loadCimdConfig,
  removeCimdClient,
  unlinkCimdClient,
  updateCimdClient,
} from "../../store/cimd.ts";
import type { Database } from "../../store/schema.ts";
import type { CimdClient, CimdConfig, CimdPolicy, CimdProfile } from "./model.ts";

export type { CimdClientState } from "../../store/cimd.ts";

export interface CimdClientChange {
  clientId?: string | undefined;
  profile?: CimdProfile | undefined;
  policy?: CimdPolicy | undefined;
}

/**
 * Where the CIMD profiles and policies live: the platform store (embedded identity provider) or
 * Keycloak's client policies (IDP=keycloak). `imaging cimd` and `imaging doctor` work on either.
 * Errors for unknown or taken names are CimdStoreError.
 */
export interface CimdRepository {
  /** Where the entries are, for messages ("the platform store", "Keycloak realm imaging"). */
  readonly location: string;
  loadConfig(): Promise<CimdConfig>;
  listClients(): Promise<CimdClient[]>;
  getClientState(client: string): Promise<CimdClientState | undefined>;
  createClient(input: {
    client: string;
    clientId: string;
    profile: CimdProfile;
    policy: CimdPolicy;
  }): Promise<CimdClient>;
  updateClient(
    client: string,
    change: (state: CimdClientState) => CimdClientChange,
  ): Promise<CimdClientState>;
  linkClient(client: string): Promise<CimdClientState>;
  unlinkClient(client: string): Promise<CimdClientState>;
  removeClient(client: string): Promise<boolean>;
}

/** The embedded identity provider's CIMD entries, in the platform store. */
export function storeCimdRepository(db: Kysely<Database>): CimdRepository {
  return {
    location: "the platform store",
    loadConfig: () => loadCimdConfig(db),
    listClients: () => listCimdClients(db),
    getClientState: (client) => getCimdClientState(db, client),
    createClient: (input) => createCimdClient(db, input),
    updateClient: (client, change) => updateCimdClient(db, client, change),
    linkClient: (client) => linkCimdClient(db, client),
    unlinkClient: (client) => unlinkCimdClient(db, client),
    removeClient: (client) => removeCimdClient(db, client),
  };
}
