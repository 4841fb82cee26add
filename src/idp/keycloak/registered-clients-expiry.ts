import { REGISTRATION_LIMITS } from "../registration/policy.ts";
import type { KeycloakAdmin } from "./admin.ts";
import { stampRegisteredClient, sweepKeycloakRegisteredClients } from "./registered-clients.ts";

/** How often the gateway looks for registered clients to expire (and for sign-ins to record). */
const SWEEP_INTERVAL_MS = 10 * 60_000;

interface RegisteredClientsKeeper {
  /** For the Keycloak proxy: records a client just registered through the gateway. */
  onRegistered(clientId: string, sourceAddress: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * IDP=keycloak with registration on: the gateway records each registration and, every
 * SWEEP_INTERVAL_MS, deletes registered clients that never completed a sign-in within 24 hours
 * (Keycloak has no such expiry of its own). A failed sweep is logged and retried at the next one.
 */
export function keepRegisteredClients(
  admin: KeycloakAdmin,
  realm: string,
  log: (message: string) => void,
  ttlSeconds: number = REGISTRATION_LIMITS.unusedClientTtlSeconds,
): RegisteredClientsKeeper {
  let running: Promise<void> | undefined;
  const sweep = () => {
    running ??= sweepKeycloakRegisteredClients(admin, realm, ttlSeconds)
      .then(({ deleted }) => {
        if (deleted.length > 0) {
          log(`deleted ${deleted.length} registered client(s) that never signed in: ${deleted.join(", ")}`);
        }
      })
      .catch((error: unknown) => log(`expiring registered clients failed: ${(error as Error).message}`))
      .finally(() => {
        running = undefined;
      });
    return running;
  };
  const timer = setInterval(sweep, SWEEP_INTERVAL_MS);
  timer.unref();
  void sweep();
  return {
    onRegistered: (clientId, sourceAddress) => stampRegisteredClient(admin, realm, clientId, sourceAddress),
    async close() {
      clearInterval(timer);
      await running;
    },
  };
}
