import type { Kysely } from "kysely";
import type { Database } from "../store/schema.ts";
import { type CimdRepository, storeCimdRepository } from "./cimd/repository.ts";
import { connectKeycloakAdmin, type KeycloakAdmin, type KeycloakAdminSettings } from "./keycloak/admin.ts";
import { keycloakCimdRepository } from "./keycloak/cimd-repository.ts";
import { describeAdminFailure } from "./keycloak/errors.ts";
import { keycloakUserDirectory } from "./keycloak/user-directory.ts";
import { storeUserDirectory, type UserDirectory } from "./user-directory.ts";

/** Keycloak could not be reached or refused the service's administrator: one sentence, no secret. */
export class IdentityAdministrationError extends Error {
  override name = "IdentityAdministrationError";
}

/**
 * Where the REST API's administration endpoints find the CIMD policies and users: the platform store
 * (embedded identity provider) or the Keycloak realm (IDP=keycloak), the same places `imaging cimd` and
 * `imaging users` use.
 */
export interface IdentityAdministration {
  readonly idp: "embedded" | "keycloak";
  /** Keycloak's admin console at the realm's users (IDP=keycloak), where users are managed. */
  readonly usersConsoleUrl?: string;
  /** Keycloak refusals and network failures become IdentityAdministrationError. */
  withCimd<T>(work: (repository: CimdRepository) => Promise<T>): Promise<T>;
  withUsers<T>(work: (directory: UserDirectory) => Promise<T>): Promise<T>;
}

export function storeAdministration(db: Kysely<Database>): IdentityAdministration {
  return {
    idp: "embedded",
    withCimd: (work) => work(storeCimdRepository(db)),
    withUsers: (work) => work(storeUserDirectory(db)),
  };
}

/**
 * Keycloak's realm through one Admin API client, connected at first use (the service may start before
 * Keycloak answers) and again after a failed connection; the client signs in again when its token expires.
 */
export function keycloakAdministration(
  settings: KeycloakAdminSettings & { keycloakUrl: string; keycloakAdminRealm: string },
): IdentityAdministration {
  const url = settings.keycloakUrl.replace(/\/+$/, "");
  const where = `Keycloak at ${url}`;
  let connection: Promise<KeycloakAdmin> | undefined;
  const inKeycloak = async <T>(work: (admin: KeycloakAdmin) => Promise<T>): Promise<T> => {
    try {
      connection ??= connectKeycloakAdmin(settings);
      const admin = await connection.catch((error: unknown) => {
        connection = undefined;
        throw error;
      });
      return await work(admin);
    } catch (error) {
      const sentence = describeAdminFailure(error, where, settings.realm);
      if (sentence !== undefined) throw new IdentityAdministrationError(sentence);
      throw error;
    }
  };
  return {
    idp: "keycloak",
    usersConsoleUrl: `${url}/admin/${encodeURIComponent(settings.keycloakAdminRealm)}/console/#/${encodeURIComponent(settings.realm)}/users`,
    withCimd: (work) => inKeycloak((admin) => work(keycloakCimdRepository(admin, settings.realm))),
    withUsers: (work) => inKeycloak((admin) => work(keycloakUserDirectory(admin, settings.realm))),
  };
}
