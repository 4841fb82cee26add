import type RoleRepresentation from "@keycloak/keycloak-admin-client/lib/defs/roleRepresentation.js";
import type UserRepresentation from "@keycloak/keycloak-admin-client/lib/defs/userRepresentation.js";
import { ROLES, type Role } from "../../contracts/platform.ts";
import { passwordProblem } from "../../domain/passwords.ts";
import { normalizeApplications, UserError, usernameProblem } from "../../domain/users.ts";
import type { UserRecord } from "../../store/users.ts";
import type { CreatedUser, NewUser, UserDirectory } from "../user-directory.ts";
import { httpStatusOf, type KeycloakAdmin } from "./admin.ts";
// Declared by provisioning in the realm's user profile (multivalued, administrators only): Keycloak
// drops attributes its user profile does not declare.
import { APPLICATIONS_ATTRIBUTE } from "./provision.ts";

/** How many users' role mappings are read at once when listing. */
const ROLE_LOOKUPS_IN_FLIGHT = 8;
const PAGE_SIZE = 200;

/**
 * The users of a Keycloak realm, under the platform's contract: the role is which of the realm roles
 * `admin` and `viewer` the user holds, the applications are the user attribute `applications`.
 * Keycloak stores user names in lower case: the records carry its spelling.
 */
export function keycloakUserDirectory(admin: KeycloakAdmin, realm: string): UserDirectory {
  const location = `Keycloak realm ${realm}`;

  const findUser = async (username: string): Promise<UserRepresentation | undefined> => {
    if (usernameProblem(username)) return undefined;
    const found = await admin.users.find({ realm, username, exact: true, briefRepresentation: false });
    const wanted = username.toLowerCase();
    return found.find((u) => u.username?.toLowerCase() === wanted);
  };

  const requireUser = async (username: string): Promise<UserRepresentation & { id: string }> => {
    const user = await findUser(username);
    if (!user?.id) throw new UserError("unknown", `No user named '${username}' (see: imaging users list)`);
    return user as UserRepresentation & { id: string };
  };

  const realmRole = async (role: Role): Promise<RoleRepresentation> => {
    const found = await admin.roles.findOneByName({ realm, name: role });
    if (!found?.id)
      throw new Error(
        `${location} has no realm role '${role}': the platform's provisioning creates it (start the service with IDP=keycloak once)`,
      );
    return found;
  };

  /** The roles of the contract the user holds, directly or through groups and composite roles. */
  const rolesOf = async (id: string): Promise<string[]> => {
    const effective = await admin.users.listCompositeRealmRoleMappings({ realm, id });
    const names = new Set(effective.map((r) => r.name));
    return ROLES.filter((r) => names.has(r));
  };

  const record = async (user: UserRepresentation): Promise<UserRecord> => ({
    id: user.id ?? "",
    username: user.username ?? "",
    roles: user.id ? await rolesOf(user.id) : [],
    applications: applicationsOf(user),
    createdAt: user.createdTimestamp === undefined ? "" : new Date(user.createdTimestamp).toISOString(),
    disabled: user.enabled === false,
  });

  const reread = async (id: string): Promise<UserRepresentation> => {
    const user = await admin.users.findOne({ realm, id });
    if (!user) throw new UserError("unknown", `The user was removed from ${location} meanwhile`);
    return user;
  };

  /** Keycloak silently drops an attribute its user profile does not declare: say so rather than lose it. */
  const checkApplicationsKept = (user: UserRepresentation, wanted: readonly string[]) => {
    const kept = applicationsOf(user);
    if (kept.length !== wanted.length || kept.some((a, i) => a !== wanted[i]))
      throw new Error(
        `${location} did not keep the user attribute '${APPLICATIONS_ATTRIBUTE}': declare it in the realm's user profile ` +
          "(multivalued, administrators view and edit; the platform's provisioning does it)",
      );
  };

  /** Makes `role` the user's only direct role among the contract's roles. */
  const replaceRole = async (id: string, role: Role) => {
    const direct = await admin.users.listRealmRoleMappings({ realm, id });
    const stale = direct.filter(
      (r) => r.name !== role && (ROLES as readonly string[]).includes(r.name ?? ""),
    );
    if (stale.length > 0)
      await admin.users.delRealmRoleMappings({ realm, id, roles: stale.map(roleMapping) });
    if (!direct.some((r) => r.name === role))
      await admin.users.addRealmRoleMappings({ realm, id, roles: [roleMapping(await realmRole(role))] });
  };

  /**
   * What the realm's user profile requires of the user that they lack: Keycloak asks for it at the
   * first sign-in. Attributes required only when a scope is requested are left out.
   */
  const missingDetails = async (user: UserRepresentation): Promise<string[]> => {
    const profile = await admin.users.getProfile({ realm });
    const detail = (name: string): unknown =>
      (name in ROOT_ATTRIBUTES ? user[name as keyof UserRepresentation] : undefined) ??
      user.attributes?.[name];
    return (profile.attributes ?? [])
      .filter((a) => {
        const required = a.required;
        if (!a.name || !required || (required.scopes ?? []).length > 0) return false;
        return (required.roles ?? []).length === 0 || (required.roles ?? []).includes("user");
      })
      .map((a) => a.name as string)
      .filter((name) => {
        const value = detail(name);
        return value === undefined || value === "" || (Array.isArray(value) && value.length === 0);
      });
  };

  const resetPassword = async (id: string, password: string) => {
    try {
      await admin.users.resetPassword({
        realm,
        id,
        credential: { type: "password", value: password, temporary: false },
      });
    } catch (error) {
      // The realm's password policy (length, history...) may refuse what passwordProblem accepts.
      if (httpStatusOf(error) === 400)
        throw new UserError("weak-password", `${location} refused the password: ${keycloakMessage(error)}`);
      throw error;
    }
  };

  return {
    location,
    keepsProfileDetails: true,

    async create(input: NewUser): Promise<CreatedUser> {
      const problem = usernameProblem(input.username);
      if (problem) throw new UserError("invalid-username", problem);
      checkRole(input.role);
      const weak = passwordProblem(input.password);
      if (weak) throw new UserError("weak-password", weak);
      const applications = normalizeApplications(input.applications ?? []);
      const existing = await findUser(input.username);
      if (existing) throw duplicate(input.username, existing.username ?? input.username);
      await realmRole(input.role); // a realm without the contract's roles is refused before anything is made

      const { email, firstName, lastName } = input.profile ?? {};
      let id: string;
      try {
        ({ id } = await admin.users.create({
          realm,
          username: input.username,
          enabled: true,
          ...(email === undefined ? {} : { email }),
          ...(firstName === undefined ? {} : { firstName }),
          ...(lastName === undefined ? {} : { lastName }),
          attributes: { [APPLICATIONS_ATTRIBUTE]: applications },
        }));
      } catch (error) {
        const status = httpStatusOf(error);
        if (status === 409) {
          const message = keycloakMessage(error);
          if (/email/i.test(message))
            throw new UserError("duplicate", `A user with email '${email}' already exists in ${location}`);
          throw duplicate(input.username, input.username);
        }
        if (status === 400)
          throw new UserError("invalid-profile", `${location} refused the user: ${keycloakMessage(error)}`);
        throw error;
      }
      try {
        await resetPassword(id, input.password);
        await replaceRole(id, input.role);
        const created = await reread(id);
        checkApplicationsKept(created, applications);
        return { ...(await record(created)), missingDetails: await missingDetails(created) };
      } catch (error) {
        // Half-made users would block a retry under the same name: undo.
        await admin.users.del({ realm, id }).catch(() => undefined);
        throw error;
      }
    },

    async list(): Promise<UserRecord[]> {
      const users: UserRepresentation[] = [];
      for (let first = 0; ; first += PAGE_SIZE) {
        const page = await admin.users.find({ realm, first, max: PAGE_SIZE, briefRepresentation: false });
        users.push(...page);
        if (page.length < PAGE_SIZE) break;
      }
      // Service accounts are clients, not people who sign in.
      const people = users.filter((u) => !u.serviceAccountClientId);
      const records: UserRecord[] = [];
      for (let i = 0; i < people.length; i += ROLE_LOOKUPS_IN_FLIGHT)
        records.push(...(await Promise.all(people.slice(i, i + ROLE_LOOKUPS_IN_FLIGHT).map(record))));
      return records.sort(
        (a, b) =>
          a.username.toLowerCase().localeCompare(b.username.toLowerCase()) ||
          a.username.localeCompare(b.username),
      );
    },

    async remove(username: string): Promise<boolean> {
      const user = await findUser(username);
      if (!user?.id) return false;
      try {
        await admin.users.del({ realm, id: user.id });
      } catch (error) {
        if (httpStatusOf(error) === 404) return false;
        throw error;
      }
      return true;
    },

    async setPassword(username: string, password: string): Promise<UserRecord> {
      const weak = passwordProblem(password);
      if (weak) throw new UserError("weak-password", weak);
      const user = await requireUser(username);
      await resetPassword(user.id, password);
      return record(user);
    },

    async grant(username, grant): Promise<UserRecord> {
      checkRole(grant.role);
      const applications = normalizeApplications(grant.applications ?? []);
      const user = await requireUser(username);
      await replaceRole(user.id, grant.role);
      // PUT replaces the representation: send the user as read, with the attribute changed.
      await admin.users.update(
        { realm, id: user.id },
        { ...user, attributes: { ...(user.attributes ?? {}), [APPLICATIONS_ATTRIBUTE]: applications } },
      );
      const updated = await reread(user.id);
      checkApplicationsKept(updated, applications);
      return record(updated);
    },
  };
}

function applicationsOf(user: UserRepresentation): string[] {
  const value: unknown = user.attributes?.[APPLICATIONS_ATTRIBUTE];
  const list = Array.isArray(value) ? value : typeof value === "string" ? [value] : [];
  return [...new Set(list.filter((v): v is string => typeof v === "string" && v !== ""))].sort();
}

/** User-profile attributes Keycloak returns as fields of the user rather than in `attributes`. */
const ROOT_ATTRIBUTES = { username: true, email: true, firstName: true, lastName: true } as const;

const roleMapping = (role: RoleRepresentation) => ({ id: role.id as string, name: role.name as string });

function checkRole(role: string): void {
  if (!(ROLES as readonly string[]).includes(role))
    throw new UserError("invalid-role", `The role must be ${ROLES.join(" or ")}, got '${role}'`);
}

function duplicate(asked: string, existing: string): UserError {
  const same =
    asked === existing
      ? ""
      : ` (as '${existing}': names are unique ignoring case; Keycloak keeps them in lower case)`;
  return new UserError("duplicate", `A user named '${asked}' already exists${same}`);
}

/** The sentence Keycloak put in an error response, else the client's message. */
export function keycloakMessage(error: unknown): string {
  const data = (error as { responseData?: unknown }).responseData;
  if (data && typeof data === "object") {
    const d = data as Record<string, unknown>;
    // User-profile validation: {field, errorMessage, params} alone or in {errors: [...]}.
    const fieldErrors = Array.isArray(d.errors) ? d.errors : typeof d.field === "string" ? [d] : [];
    const sentences = fieldErrors
      .filter((e): e is FieldError => typeof e === "object" && e !== null && typeof e.field === "string")
      .map(fieldErrorText);
    if (sentences.length > 0) return sentences.join("; ");
    for (const key of ["errorMessage", "error_description", "error"])
      if (typeof d[key] === "string" && d[key] !== "") return d[key] as string;
  }
  return error instanceof Error ? error.message : String(error);
}

interface FieldError {
  field: string;
  errorMessage?: unknown;
  params?: unknown;
}

/** Keycloak answers with message keys of its user profile validators: the common ones in words. */
function fieldErrorText({ field, errorMessage, params }: FieldError): string {
  const p = Array.isArray(params) ? params : [];
  const name = field === "firstName" ? "first name" : field === "lastName" ? "last name" : field;
  switch (errorMessage) {
    case "error-invalid-length":
      return `${name} must be ${p[1] ?? 0} to ${p[2] ?? "?"} characters long`;
    case "error-invalid-length-too-long":
      return `${name} must be at most ${p[2] ?? "?"} characters long`;
    case "error-invalid-length-too-short":
      return `${name} must be at least ${p[1] ?? "?"} characters long`;
    case "error-invalid-email":
      return `${name} is not a valid e-mail address`;
    case "error-user-attribute-required":
      return `${name} is required`;
    case "error-username-invalid-character":
    case "error-person-name-invalid-character":
      return `${name} contains a character Keycloak refuses`;
    default:
      return `${name}: ${String(errorMessage ?? "refused")}`;
  }
}
