import { randomUUID } from "node:crypto";
import { type Kysely, sql } from "kysely";
import {
  generatePassword,
  hashPassword,
  needsRehash,
  passwordProblem,
  verifyPassword,
} from "../idp/passwords.ts";
import { ROLES, type Role } from "./api-keys.ts";
import { nowIso } from "./batch.ts";
import type { Database } from "./schema.ts";

export { ROLES, type Role };

/** Users of the embedded identity provider (migration 003). */
export interface UsersTable {
  id: string;
  username: string;
  password_hash: string;
  /** JSON array of role names. */
  roles: string;
  /** JSON array of application names. */
  applications: string;
  created_at: string;
  updated_at: string;
  /** 1 disabled, 0 enabled. */
  disabled: number;
}

type UsersDb = Kysely<Database & { users: UsersTable }>;

export interface UserRecord {
  id: string;
  username: string;
  roles: string[];
  applications: string[];
  createdAt: string;
  disabled: boolean;
}

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
  const existing = await findUserByName(db, input.username);
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
  try {
    await users(db).insertInto("users").values(row).execute();
  } catch (error) {
    // Another process created the same name between the check and the insert.
    if (isUniqueViolation(error)) throw duplicate(input.username, input.username);
    throw error;
  }
  return toRecord(row);
}

/** Every user, ordered by name ignoring case. Password hashes are never part of a UserRecord. */
export async function listUsers(db: Kysely<Database>): Promise<UserRecord[]> {
  const rows = await users(db)
    .selectFrom("users")
    .selectAll()
    .orderBy(sql`lower(username)`)
    .orderBy("username")
    .execute();
  return rows.map(toRecord);
}

/** The user of that name, ignoring case. */
export async function findUserByName(
  db: Kysely<Database>,
  username: string,
): Promise<UserRecord | undefined> {
  const row = await findRow(db, username);
  return row && toRecord(row);
}

export async function findUserById(db: Kysely<Database>, id: string): Promise<UserRecord | undefined> {
  const row = await users(db).selectFrom("users").selectAll().where("id", "=", id).executeTakeFirst();
  return row && toRecord(row);
}

/** Returns false when no user has that name. */
export async function removeUser(db: Kysely<Database>, username: string): Promise<boolean> {
  if (usernameProblem(username)) return false;
  const result = await users(db)
    .deleteFrom("users")
    .where(sql`lower(username)`, "=", lowerAscii(username))
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
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
  const updatedAt = nowIso();
  await users(db)
    .updateTable("users")
    .set({ password_hash: passwordHash, updated_at: updatedAt })
    .where("id", "=", row.id)
    .execute();
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
  await users(db).updateTable("users").set(changes).where("id", "=", row.id).execute();
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
  await users(db).updateTable("users").set(changes).where("id", "=", row.id).execute();
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
  const row = await findRow(db, username);
  const matches = await verifyPassword(password, row?.password_hash);
  if (!row || !matches || row.disabled) return undefined;
  if (needsRehash(row.password_hash)) {
    const rehashed = await hashPassword(password);
    await users(db)
      .updateTable("users")
      .set({ password_hash: rehashed })
      .where("id", "=", row.id)
      .where("password_hash", "=", row.password_hash)
      .execute();
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
  const any = await users(db).selectFrom("users").select("id").limit(1).executeTakeFirst();
  if (any) return { created: false };
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

function users(db: Kysely<Database>): UsersDb {
  return db.withTables<{ users: UsersTable }>();
}

async function findRow(db: Kysely<Database>, username: string): Promise<UsersTable | undefined> {
  if (usernameProblem(username)) return undefined;
  return users(db)
    .selectFrom("users")
    .selectAll()
    .where(sql`lower(username)`, "=", lowerAscii(username))
    .executeTakeFirst();
}

async function requireRow(db: Kysely<Database>, username: string): Promise<UsersTable> {
  const row = await findRow(db, username);
  if (!row) throw new UserError("unknown", `No user named '${username}' (see: imaging users list)`);
  return row;
}

function toRecord(row: UsersTable): UserRecord {
  return {
    id: row.id,
    username: row.username,
    roles: parseStrings(row.roles),
    applications: parseStrings(row.applications),
    createdAt: row.created_at,
    disabled: Number(row.disabled) !== 0,
  };
}

function parseStrings(json: string): string[] {
  try {
    const value: unknown = JSON.parse(json);
    return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
  } catch {
    return [];
  }
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

/** User names are ASCII, so lowering ASCII letters matches lower() on both databases. */
function lowerAscii(text: string): string {
  return text.replace(/[A-Z]/g, (c) => c.toLowerCase());
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}

function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: unknown; errcode?: unknown; message?: unknown };
  if (e?.code === "23505") return true; // PostgreSQL unique_violation
  if (e?.errcode === 2067 || e?.errcode === 1555) return true; // SQLITE_CONSTRAINT_UNIQUE / PRIMARYKEY
  return typeof e?.message === "string" && /UNIQUE constraint failed/i.test(e.message);
}
