import { createContext } from "preact";
import { useContext } from "preact/hooks";
import type { ConsoleSessionInfo } from "../contracts/console-session.ts";

/** The signed-in user as the pages see it: the session's answer without what only session.ts keeps. */
export type Session = Omit<ConsoleSessionInfo, "applications" | "csrfToken">;

let token = "";

/** The session's CSRF token, sent with every change (api.ts). */
export const csrfToken = (): string => token;

/** Reads the signed-in user's session; undefined when not signed in (the caller sends to sign-in). */
export async function loadSession(): Promise<Session | undefined> {
  const response = await fetch("/console/session", {
    credentials: "same-origin",
    headers: { accept: "application/json" },
  });
  if (response.status === 401) return undefined;
  if (!response.ok) throw new Error(`The console session cannot be read (${response.status})`);
  const answer = (await response.json()) as ConsoleSessionInfo;
  token = answer.csrfToken;
  const { user, roles, isAdmin, idp, baseUrl, version } = answer;
  return { user, roles, isAdmin, idp, baseUrl, version };
}

export const SessionContext = createContext<Session | undefined>(undefined);

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error("useSession() outside the signed-in console");
  return session;
}

/** Signs out of the console and of the identity provider (the gateway says where to go). */
export async function signOut(): Promise<void> {
  const response = await fetch("/console/sign-out", {
    method: "POST",
    credentials: "same-origin",
    headers: { "x-csrf-token": token, accept: "application/json" },
  });
  const { location: target } = (await response.json()) as { location: string };
  location.assign(target);
}
