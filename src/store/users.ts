import { type Kysely, sql } from "kysely";
import type { User } from "../contracts/admin.ts";
import type { Database, UsersTable } from "./schema.ts";

export type { UsersTable };

/** A user as the REST API shows it, with the row's id (never the password hash). */
export type UserRecord = User & { id: string };

/**
 * Stores a new user row; false when the name is taken (names are unique ignoring case), whether the
 * row came first or another process inserted the same name between a check and this insert.
 */
export async function insertUser(db: Kysely<Database>, row: UsersTable): Promise<boolean> {
  try {
    await db.insertInto("users").values(row).execute();
    return true;
  } catch (error) {
    if (isUniqueViolation(error)) return false;
    throw error;
  }
}

/** Every user, ordered by name ignoring case. Password hashes are never part of a UserRecord. */
export async function listUsers(db: Kysely<Database>): Promise<UserRecord[]> {
  const rows = await db
    .selectFrom("users")
    .selectAll()
    .orderBy(sql`lower(username)`)
    .orderBy("username")
    .execute();
  return rows.map(toRecord);
}

export async function findUserById(db: Kysely<Database>, id: string): Promise<UserRecord | undefined> {
  const row = await db.selectFrom("users").selectAll().where("id", "=", id).executeTakeFirst();
  return row && toRecord(row);
}

/** The stored row (with its password hash) of the user of that name, ignoring case. */
export async function findUserRow(db: Kysely<Database>, username: string): Promise<UsersTable | undefined> {
  return db
    .selectFrom("users")
    .selectAll()
    .where(sql`lower(username)`, "=", lowerAscii(username))
    .executeTakeFirst();
}

/** True when the store holds at least one user. */
export async function anyUser(db: Kysely<Database>): Promise<boolean> {
  return (await db.selectFrom("users").select("id").limit(1).executeTakeFirst()) !== undefined;
}

/** Returns false when no user has that name. */
export async function deleteUser(db: Kysely<Database>, username: string): Promise<boolean> {
  const result = await db
    .deleteFrom("users")
    .where(sql`lower(username)`, "=", lowerAscii(username))
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Updates the columns given of one user's row. */
export async function updateUser(
  db: Kysely<Database>,
  id: string,
  changes: Partial<Omit<UsersTable, "id" | "username" | "created_at">>,
): Promise<void> {
  await db.updateTable("users").set(changes).where("id", "=", id).execute();
}

/** Replaces a password hash unless another sign-in replaced it first (compare-and-set). */
export async function replacePasswordHash(
  db: Kysely<Database>,
  id: string,
  expected: string,
  replacement: string,
): Promise<void> {
  await db
    .updateTable("users")
    .set({ password_hash: replacement })
    .where("id", "=", id)
    .where("password_hash", "=", expected)
    .execute();
}

export function toRecord(row: UsersTable): UserRecord {
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

/**
 * User names are ASCII (see domain/users.ts), so lowering ASCII letters matches lower() on both
 * databases; a name with other characters matches no stored name.
 */
function lowerAscii(text: string): string {
  return text.replace(/[A-Z]/g, (c) => c.toLowerCase());
}

function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: unknown; errcode?: unknown; message?: unknown };
  if (e?.code === "23505") return true; // PostgreSQL unique_violation
  if (e?.errcode === 2067 || e?.errcode === 1555) return true; // SQLITE_CONSTRAINT_UNIQUE / PRIMARYKEY
  return typeof e?.message === "string" && /UNIQUE constraint failed/i.test(e.message);
}
