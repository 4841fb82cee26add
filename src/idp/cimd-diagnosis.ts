import { checkClientIdUrl } from "./cimd/client-id.ts";
import { type CimdDiagnosis, diagnoseCimdClient } from "./cimd/diagnostics.ts";
import type { CimdClientState, CimdRepository } from "./cimd/repository.ts";
import { type KeycloakCimdRepository, UNKNOWN_CLIENT_ID } from "./keycloak/cimd-repository.ts";

/**
 * The profile names a policy may associate, for diagnoses: in Keycloak also its non-CIMD and global
 * profiles (an administrator may add one to a CIMD policy), in the store the CIMD profiles.
 */
export async function knownProfileNames(repository: CimdRepository): Promise<string[]> {
  const extended = repository as Partial<KeycloakCimdRepository>;
  if (typeof extended.profileNames === "function") return extended.profileNames();
  return (await repository.loadConfig()).profiles.map((p) => p.name);
}

/**
 * diagnoseCimdClient for a stored client state. A pair made outside `imaging cimd` (Keycloak's console)
 * has no recorded client_id: the checks of the client_id itself are skipped and a note says how to
 * record one, rather than flagging "client_id is not an absolute URL".
 */
export function diagnoseCimdState(state: CimdClientState, knownProfiles?: readonly string[]): CimdDiagnosis {
  const { client, profile, policy } = state;
  const diagnosis = diagnoseCimdClient(client, profile, policy, knownProfiles);
  if (client.clientId !== UNKNOWN_CLIENT_ID) return diagnosis;
  const unparsable = checkClientIdUrl(UNKNOWN_CLIENT_ID, { allowHttpScheme: true });
  const skipped = unparsable.ok ? undefined : unparsable.description;
  return {
    problems: diagnosis.problems.filter((p) => p !== skipped),
    notes: [
      `no client_id recorded (made outside imaging cimd): record it with imaging cimd set ${client.client} --client-id <url> to check it`,
      ...diagnosis.notes,
    ],
  };
}
