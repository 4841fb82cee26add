/**
 * The rules of the embedded identity provider's users: valid names, roles and applications, password
 * strength and hashing (passwords.ts), the first administrator. The rows live in store/users.ts.
 */

import { randomUUID } from "node:crypto";
import type { Kysely } from "kysely";
import { ROLES, type Role } from "../contracts/platform.ts";
import { nowIso } from "../store/clock.ts";
import type { Database } from "../store/schema.ts";
import {
  anyUser,
  deleteUser,
  findUserRow,
  insertUser,
  replacePasswordHash,
  toRecord,
  type UserRecord,
  type UsersTable,
  updateUser,
} from "../store/users.ts";
import { generatePassword, hashPassword, needsRehash, passwordProblem, verifyPassword } from "./passwords.ts";

export type UserErrorCode =
  | "invalid-username"
  | "invalid-role"
  | "invalid-application"
  | "weak-password"
  | "invalid-profile"
  | "duplicate"
  | "unknown";

/** A refused user operation, with a sentence meant for the person who asked for it. */
export class UserError extends Error {
  override name = "UserError";
  readonly code: UserErrorCode;
  constructor(code: UserErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}

export const ADMIN_USERNAME = "admin";
const USERNAME = /^[A-Za-z0-9._@-]{1,64}$/;

/** Why a user name is refused, or undefined when it is valid. */
export function usernameProblem(username: string): string | undefined {
  if (USERNAME.test(username)) return undefined;
  return `Invalid user name '${username}': 1 to 64 characters among letters, digits, '.', '_', '-' and '@'`;
}

export interface CreateUserInput {
  username: string;
  password: string;
  role: Role;
  applications?: readonly string[];
}

/** Creates a user; throws UserError for an invalid name or role, a weak password or a taken name. */
export async function createUser(db: Kysely<Database>, input: CreateUserInput): Promise<UserRecord> {
  assertUsername(input.username);
  assertRole(input.role);
  assertPassword(input.password);
  const applications = normalizeApplications(input.applications ?? []);
  const existing = await findUserRow(db, input.username);
  if (existing) throw duplicate(input.username, existing.username);
  const now = nowIso();
  const row: UsersTable = {
    id: randomUUID(),
    username: input.username,
    password_hash: await hashPassword(input.password),
    roles: JSON.stringify([input.role]),
    applications: JSON.stringify(applications),
    created_at: now,
    updated_at: now,
    disabled: 0,
  };
  // Another process may create the same name between the check and the insert.
  if (!(await insertUser(db, row))) throw duplicate(input.username, input.username);
  return toRecord(row);
}

/** Returns false when no user has that name. */
export async function removeUser(db: Kysely<Database>, username: string): Promise<boolean> {
  if (usernameProblem(username)) return false;
  return deleteUser(db, username);
}

/** Replaces the user's password; throws UserError for a weak password or an unknown user. */
export async function setPassword(
  db: Kysely<Database>,
  username: string,
  password: string,
): Promise<UserRecord> {
  assertPassword(password);
  const row = await requireRow(db, username);
  const passwordHash = await hashPassword(password);
  await updateUser(db, row.id, { password_hash: passwordHash, updated_at: nowIso() });
  return toRecord(row);
}

/** Replaces the user's role and sets the applications it may read; throws UserError for an unknown user. */
export async function grantUser(
  db: Kysely<Database>,
  username: string,
  grant: { role: Role; applications?: readonly string[] },
): Promise<UserRecord> {
  assertRole(grant.role);
  const applications = normalizeApplications(grant.applications ?? []);
  const row = await requireRow(db, username);
  const changes = {
    roles: JSON.stringify([grant.role]),
    applications: JSON.stringify(applications),
    updated_at: nowIso(),
  };
  await updateUser(db, row.id, changes);
  return toRecord({ ...row, ...changes });
}

/** Disables (refused at sign-in) or enables a user; throws UserError for an unknown user. */
export async function setUserDisabled(
  db: Kysely<Database>,
  username: string,
  disabled: boolean,
): Promise<UserRecord> {
  const row = await requireRow(db, username);
  const changes = { disabled: disabled ? 1 : 0, updated_at: nowIso() };
  await updateUser(db, row.id, changes);
  return toRecord({ ...row, ...changes });
}

/**
 * The user when the name (any case) and password match and the user is enabled, else undefined.
 * An unknown name costs the same hashing work as a known one. A hash made with older parameters
 * is replaced by one with the current parameters.
 */
export async function verifyCredentials(
  db: Kysely<Database>,
  username: string,
  password: string,
): Promise<UserRecord | undefined> {
  const row = usernameProblem(username) ? undefined : await findUserRow(db, username);
  const matches = await verifyPassword(password, row?.password_hash);
  if (!row || !matches || row.disabled) return undefined;
  if (needsRehash(row.password_hash)) {
    await replacePasswordHash(db, row.id, row.password_hash, await hashPassword(password));
  }
  return toRecord(row);
}

/**
 * On the first start (a store without any user), creates the user `admin` with role admin: its
 * password is `password` (IMAGING_ADMIN_PASSWORD) when given, else a generated one returned once in
 * `generatedPassword`. Afterwards it does nothing, whatever the password given.
 */
export async function ensureAdminUser(
  db: Kysely<Database>,
  options: { password?: string | undefined } = {},
): Promise<{ created: boolean; generatedPassword?: string }> {
  if (await anyUser(db)) return { created: false };
  const given = options.password !== undefined && options.password !== "";
  if (given) {
    const problem = passwordProblem(options.password as string);
    if (problem)
      throw new UserError("weak-password", `IMAGING_ADMIN_PASSWORD is refused: ${lowerFirst(problem)}`);
  }
  const password = given ? (options.password as string) : generatePassword();
  try {
    await createUser(db, { username: ADMIN_USERNAME, password, role: "admin" });
  } catch (error) {
    // Another process starting on the same store created it first.
    if (error instanceof UserError && error.code === "duplicate") return { created: false };
    throw error;
  }
  return given ? { created: true } : { created: true, generatedPassword: password };
}

async function requireRow(db: Kysely<Database>, username: string): Promise<UsersTable> {
  const row = usernameProblem(username) ? undefined : await findUserRow(db, username);
  if (!row) throw new UserError("unknown", `No user named '${username}' (see: imaging users list)`);
  return row;
}

/** Application names trimmed, without duplicates, sorted; throws UserError for an empty name. */
export function normalizeApplications(applications: readonly string[]): string[] {
  const names = applications.map((a) => a.trim());
  if (names.some((a) => a === ""))
    throw new UserError("invalid-application", "Application names must not be empty");
  return [...new Set(names)].sort();
}

function assertUsername(username: string): void {
  const problem = usernameProblem(username);
  if (problem) throw new UserError("invalid-username", problem);
}

function assertRole(role: string): void {
  if (!ROLES.includes(role as Role)) {
    throw new UserError("invalid-role", `The role must be ${ROLES.join(" or ")}, got '${role}'`);
  }
}

function assertPassword(password: string): void {
  const problem = passwordProblem(password);
  if (problem) throw new UserError("weak-password", problem);
}

function duplicate(asked: string, existing: string): UserError {
  const same = asked === existing ? "" : ` (as '${existing}': names are unique ignoring case)`;
  return new UserError("duplicate", `A user named '${asked}' already exists${same}`);
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}
