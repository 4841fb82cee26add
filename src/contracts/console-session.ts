/**
 * What GET /console/session answers: the gateway builds it (src/gateway/console/index.ts), the console
 * reads it at start (src/console/session.ts). A type only, so the console's browser bundle imports nothing.
 */
export interface ConsoleSessionInfo {
  user: string;
  roles: string[];
  applications: string[];
  isAdmin: boolean;
  idp: "embedded" | "keycloak";
  baseUrl: string;
  version: string;
  /** Sent back as x-csrf-token with every change the console makes. */
  csrfToken: string;
}
