import type { Kysely } from "kysely";
import type { Role } from "../contracts/platform.ts";
import { createUser, grantUser, removeUser, setPassword, UserError } from "../domain/users.ts";
import type { Database } from "../store/schema.ts";
import { listUsers, type UserRecord } from "../store/users.ts";

export type { UserRecord } from "../store/users.ts";

/** Personal details Keycloak's default user profile requires (it asks for them at first sign-in otherwise). */
export interface UserProfileDetails {
  email?: string | undefined;
  firstName?: string | undefined;
  lastName?: string | undefined;
}

/** A created user; Keycloak may still lack details its user profile requires (asked at first sign-in). */
export interface CreatedUser extends UserRecord {
  /** Required user-profile attributes without a value, e.g. ["email", "firstName", "lastName"]. */
  missingDetails?: string[];
}

export interface NewUser {
  username: string;
  password: string;
  role: Role;
  applications?: readonly string[];
  /** Only the Keycloak directory keeps them: the embedded one refuses them (UserError "invalid-profile"). */
  profile?: UserProfileDetails;
}

/**
 * Who may sign in, with their role and the applications they may read: the platform store (embedded
 * identity provider) or the Keycloak realm (IDP=keycloak). `imaging users` works on either. Refusals
 * are UserError: "unknown" and "duplicate" for names, the other codes for bad input.
 */
export interface UserDirectory {
  /** Where the users are, for messages ("the platform store", "Keycloak realm imaging"). */
  readonly location: string;
  /** Whether create() keeps email, first and last name. */
  readonly keepsProfileDetails: boolean;
  create(user: NewUser): Promise<CreatedUser>;
  /** Every user, ordered by name ignoring case. */
  list(): Promise<UserRecord[]>;
  /** False when no user has that name (any case). */
  remove(username: string): Promise<boolean>;
  setPassword(username: string, password: string): Promise<UserRecord>;
  /** Replaces the user's role and the applications they may read. */
  grant(username: string, grant: { role: Role; applications?: readonly string[] }): Promise<UserRecord>;
}

/** The embedded identity provider's users, in the platform store. */
export function storeUserDirectory(db: Kysely<Database>): UserDirectory {
  return {
    location: "the platform store",
    keepsProfileDetails: false,
    create: async ({ profile, ...user }) => {
      if (profile && Object.values(profile).some((v) => v !== undefined))
        throw new UserError(
          "invalid-profile",
          "email, first and last name are kept only by Keycloak (IDP=keycloak): the embedded identity provider has no such fields",
        );
      return createUser(db, user);
    },
    list: () => listUsers(db),
    remove: (username) => removeUser(db, username),
    setPassword: (username, password) => setPassword(db, username, password),
    grant: (username, grant) => grantUser(db, username, grant),
  };
}
