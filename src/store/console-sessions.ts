import { createHash } from "node:crypto";
import type { Kysely } from "kysely";
import type { Database } from "./schema.ts";

interface PendingSignIn {
  codeVerifier: string;
  nonce: string;
  returnTo: string;
}

export interface ConsoleSession {
  username: string;
  csrfToken: string;
  accessToken: string;
  /** Epoch milliseconds. */
  accessExpiresAt: number;
  refreshToken: string | null;
  idToken: string | null;
  expiresAt: number;
}

/** Secrets the browser holds (state, session cookie) are stored only as their SHA-256. */
export const secretHash = (value: string): string => createHash("sha256").update(value).digest("base64url");

export async function savePendingSignIn(
  db: Kysely<Database>,
  state: string,
  pending: PendingSignIn,
  expiresAt: number,
): Promise<void> {
  await db
    .insertInto("console_sign_ins")
    .values({
      state_hash: secretHash(state),
      code_verifier: pending.codeVerifier,
      nonce: pending.nonce,
      return_to: pending.returnTo,
      expires_at: expiresAt,
    })
    .execute();
}

/** Reads and deletes in one step: a `state` is good for one callback only. */
export async function takePendingSignIn(
  db: Kysely<Database>,
  state: string,
  now = Date.now(),
): Promise<PendingSignIn | undefined> {
  const row = await db
    .deleteFrom("console_sign_ins")
    .where("state_hash", "=", secretHash(state))
    .returningAll()
    .executeTakeFirst();
  if (!row || Number(row.expires_at) <= now) return undefined;
  return { codeVerifier: row.code_verifier, nonce: row.nonce, returnTo: row.return_to };
}

export async function createConsoleSession(
  db: Kysely<Database>,
  sessionId: string,
  session: ConsoleSession,
  now = Date.now(),
): Promise<void> {
  await db
    .insertInto("console_sessions")
    .values({
      id_hash: secretHash(sessionId),
      username: session.username,
      csrf_token: session.csrfToken,
      access_token: session.accessToken,
      access_expires_at: session.accessExpiresAt,
      refresh_token: session.refreshToken,
      id_token: session.idToken,
      created_at: now,
      expires_at: session.expiresAt,
    })
    .execute();
}

export async function findConsoleSession(
  db: Kysely<Database>,
  sessionId: string,
  now = Date.now(),
): Promise<ConsoleSession | undefined> {
  const row = await db
    .selectFrom("console_sessions")
    .selectAll()
    .where("id_hash", "=", secretHash(sessionId))
    .executeTakeFirst();
  if (!row || Number(row.expires_at) <= now) return undefined;
  return {
    username: row.username,
    csrfToken: row.csrf_token,
    accessToken: row.access_token,
    accessExpiresAt: Number(row.access_expires_at),
    refreshToken: row.refresh_token,
    idToken: row.id_token,
    expiresAt: Number(row.expires_at),
  };
}

/** After a refresh: the new tokens (a refresh token may rotate). */
export async function updateConsoleTokens(
  db: Kysely<Database>,
  sessionId: string,
  tokens: {
    accessToken: string;
    accessExpiresAt: number;
    refreshToken: string | null;
    idToken: string | null;
  },
): Promise<void> {
  await db
    .updateTable("console_sessions")
    .set({
      access_token: tokens.accessToken,
      access_expires_at: tokens.accessExpiresAt,
      refresh_token: tokens.refreshToken,
      id_token: tokens.idToken,
    })
    .where("id_hash", "=", secretHash(sessionId))
    .execute();
}

export async function deleteConsoleSession(db: Kysely<Database>, sessionId: string): Promise<void> {
  await db.deleteFrom("console_sessions").where("id_hash", "=", secretHash(sessionId)).execute();
}

/** Drops expired sessions and abandoned sign-ins (called now and then by the gateway). */
export async function purgeExpiredConsoleState(db: Kysely<Database>, now = Date.now()): Promise<void> {
  await db.deleteFrom("console_sessions").where("expires_at", "<=", now).execute();
  await db.deleteFrom("console_sign_ins").where("expires_at", "<=", now).execute();
}
