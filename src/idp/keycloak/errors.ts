import { httpStatusOf, KeycloakAdminError } from "./admin.ts";
import { keycloakMessage } from "./user-directory.ts";

/**
 * One sentence for a failed Admin API call: refused (401/403), another HTTP answer with Keycloak's own
 * message, or Keycloak unreachable. Undefined for errors that are not about talking to Keycloak.
 * `where` names the server, e.g. "Keycloak at http://kc:8080/auth".
 */
export function describeAdminFailure(error: unknown, where: string, realm: string): string | undefined {
  if (error instanceof KeycloakAdminError) return error.message;
  const status = httpStatusOf(error);
  if (status === 401 || status === 403) {
    return (
      `${where} refused the administrator's request in realm ${realm} (HTTP ${status}): it needs the roles ` +
      `manage-realm, manage-clients and manage-users of client ${realm}-realm in realm master ` +
      `(docs/keycloak.md, "The administrator the platform uses")`
    );
  }
  if (status !== undefined)
    return `${where} answered HTTP ${status} in realm ${realm}: ${keycloakMessage(error)}`;
  if (isNetworkFailure(error)) {
    const cause = (error as Error).cause;
    const reason = cause instanceof Error ? cause.message : (error as Error).message;
    return `Cannot reach ${where} (KEYCLOAK_URL): ${reason}`;
  }
  return undefined;
}

function isNetworkFailure(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  return (
    (error instanceof TypeError && /fetch failed/i.test(error.message)) ||
    error.name === "AbortError" ||
    error.name === "TimeoutError"
  );
}
