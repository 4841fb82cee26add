import type KeycloakAdminClient from "@keycloak/keycloak-admin-client";
import { maskUrlUserinfo } from "../../config/redact.ts";
import type { Settings } from "../../config/settings.ts";

export type KeycloakAdmin = KeycloakAdminClient;

/** The settings that say where Keycloak is and how to administer it (IDP=keycloak). */
export type KeycloakAdminSettings = Pick<
  Settings,
  | "keycloakUrl"
  | "keycloakAdminRealm"
  | "keycloakAdminUsername"
  | "keycloakAdminPassword"
  | "keycloakAdminClientId"
  | "keycloakAdminClientSecret"
> & { realm: string };

/** Keycloak refused or could not be reached: the message says which setting to look at (URL credentials masked). */
export class KeycloakAdminError extends Error {
  override name = "KeycloakAdminError";
  constructor(message: string) {
    super(maskUrlUserinfo(message));
  }
}

/** How long one Admin API request may take before the platform calls Keycloak unreachable. */
export const ADMIN_REQUEST_TIMEOUT_MS = 15_000;

/**
 * Creating a realm is Keycloak's dearest request (its default roles, clients, scopes, flows and keys in
 * one transaction): 5-11 s measured on the test Keycloak with two cores busy, beyond 15 s on a loaded CI
 * run, where start-up failed as "cannot reach Keycloak". Start-up provisioning runs once and waits.
 */
export const PROVISIONING_REQUEST_TIMEOUT_MS = 120_000;

/**
 * An Admin REST API client working in the platform's realm. It signs in to the admin realm (an
 * administrator through `admin-cli`, or a service account) and signs in again whenever its token has
 * expired: admin tokens live one minute by default, shorter than a provisioning run on a slow server.
 */
export async function connectKeycloakAdmin(
  settings: KeycloakAdminSettings,
  options: { timeoutMs?: number } = {},
): Promise<KeycloakAdmin> {
  const timeout = options.timeoutMs ?? ADMIN_REQUEST_TIMEOUT_MS;
  const baseUrl = settings.keycloakUrl?.replace(/\/+$/, "");
  if (!baseUrl) throw new KeycloakAdminError("KEYCLOAK_URL is not set");
  // Loaded here, not at import: the CLI's commands reach this module without always talking to Keycloak.
  const { default: KeycloakAdminClient } = await import("@keycloak/keycloak-admin-client");
  const credentials = settings.keycloakAdminClientId
    ? {
        grantType: "client_credentials" as const,
        clientId: settings.keycloakAdminClientId,
        clientSecret: settings.keycloakAdminClientSecret ?? "",
      }
    : {
        grantType: "password" as const,
        clientId: "admin-cli",
        username: settings.keycloakAdminUsername ?? "",
        password: settings.keycloakAdminPassword ?? "",
      };
  const login = new KeycloakAdminClient({ baseUrl, realmName: settings.keycloakAdminRealm, timeout });
  const signIn = async () => {
    try {
      await login.auth(credentials);
    } catch (error) {
      throw explainSignInFailure(error, baseUrl, settings);
    }
  };
  await signIn();

  const admin = new KeycloakAdminClient({ baseUrl, realmName: settings.realm, timeout });
  let pending: Promise<void> | undefined;
  admin.registerTokenProvider({
    async getAccessToken() {
      if (login.isTokenExpired()) {
        pending ??= signIn().finally(() => {
          pending = undefined;
        });
        await pending;
      }
      return login.accessToken;
    },
  });
  return admin;
}

function explainSignInFailure(error: unknown, baseUrl: string, settings: KeycloakAdminSettings): Error {
  const status = (error as { response?: { status?: number } }).response?.status;
  const who = settings.keycloakAdminClientId
    ? `service account ${settings.keycloakAdminClientId} (KEYCLOAK_ADMIN_CLIENT_ID/SECRET)`
    : `administrator ${settings.keycloakAdminUsername} (KEYCLOAK_ADMIN_USERNAME/PASSWORD)`;
  if (status === 401 || status === 400) {
    return new KeycloakAdminError(
      `Keycloak refused the ${who} in realm ${settings.keycloakAdminRealm}: check the credentials and KEYCLOAK_ADMIN_REALM`,
    );
  }
  if (status === 404) {
    return new KeycloakAdminError(
      `No Keycloak realm ${settings.keycloakAdminRealm} at ${baseUrl}: check KEYCLOAK_URL (with Keycloak's relative path, e.g. /auth) and KEYCLOAK_ADMIN_REALM`,
    );
  }
  const reason =
    error instanceof Error
      ? error.cause instanceof Error
        ? error.cause.message
        : error.message
      : String(error);
  return new KeycloakAdminError(`Cannot reach Keycloak at ${baseUrl} (KEYCLOAK_URL): ${reason}`);
}

/** Whether an Admin API error is an HTTP status (the client throws NetworkError with `response`). */
export function httpStatusOf(error: unknown): number | undefined {
  return (error as { response?: { status?: number } }).response?.status;
}
