import type { RuntimeConfig } from "../config/runtime-config.ts";
import { type CimdRepository, storeCimdRepository } from "../idp/cimd/repository.ts";
import { connectKeycloakAdmin, type KeycloakAdmin } from "../idp/keycloak/admin.ts";
import { keycloakCimdRepository } from "../idp/keycloak/cimd-repository.ts";
import { describeAdminFailure } from "../idp/keycloak/errors.ts";
import { keycloakUserDirectory } from "../idp/keycloak/user-directory.ts";
import { storeUserDirectory, type UserDirectory } from "../idp/user-directory.ts";
import { type DeploymentOptions, deploymentConfig, withStore } from "./context.ts";
import { CliError } from "./output.ts";

type IdpOptions = DeploymentOptions;

/** An authenticated Admin REST API client working in the platform's realm. */
interface KeycloakConnection {
  admin: KeycloakAdmin;
  realm: string;
  /** KEYCLOAK_URL, without a trailing slash. */
  url: string;
}

/**
 * The configuration as the service resolves it (IDP, KEYCLOAK_REALM mapped into `realm`, Keycloak
 * settings checked). Throws ConfigError with the settings to fix.
 */
export function idpConfigFrom(options: IdpOptions): Promise<RuntimeConfig> {
  return deploymentConfig(options);
}

/**
 * Runs `work` with an Admin API connection to the configured Keycloak realm (IDP=keycloak or not).
 * Keycloak's refusals and network failures become one-line CliErrors naming the setting to check;
 * errors `work` throws itself (CliError, UserError, CimdStoreError...) pass unchanged.
 */
export async function withKeycloakAdmin<T>(
  options: IdpOptions,
  work: (connection: KeycloakConnection, config: RuntimeConfig) => Promise<T>,
): Promise<T> {
  const config = await idpConfigFrom(options);
  return inKeycloak(config, (connection) => work(connection, config));
}

/** `imaging cimd`'s entries where the configured identity provider keeps them. */
export async function withCimdRepository<T>(
  options: IdpOptions,
  work: (repository: CimdRepository) => Promise<T>,
): Promise<T> {
  const config = await idpConfigFrom(options);
  if (config.idp === "keycloak")
    return inKeycloak(config, ({ admin, realm }) => work(keycloakCimdRepository(admin, realm)));
  return withStore(options, (store) => work(storeCimdRepository(store.db)));
}

/** `imaging users`'s users where the configured identity provider keeps them. */
export async function withUserDirectory<T>(
  options: IdpOptions,
  work: (directory: UserDirectory) => Promise<T>,
): Promise<T> {
  const config = await idpConfigFrom(options);
  if (config.idp === "keycloak")
    return inKeycloak(config, ({ admin, realm }) => work(keycloakUserDirectory(admin, realm)));
  return withStore(options, (store) => work(storeUserDirectory(store.db)));
}

async function inKeycloak<T>(
  config: RuntimeConfig,
  work: (connection: KeycloakConnection) => Promise<T>,
): Promise<T> {
  const url = config.keycloakUrl ?? "";
  const realm = config.realm;
  const where = `Keycloak at ${url}`;
  try {
    const admin = await connectKeycloakAdmin(config);
    // Checked first so that a missing realm reads as such rather than as a 404 of some request.
    const found = await admin.realms.findOne({ realm });
    if (!found)
      throw new CliError(
        `${where} has no realm ${realm} (KEYCLOAK_REALM, else IDP_REALM): start the service once with IDP=keycloak to provision it`,
      );
    return await work({ admin, realm, url });
  } catch (error) {
    throw keycloakFailure(error, where, realm);
  }
}

/** One readable sentence for what went wrong talking to Keycloak; other errors are returned as they are. */
function keycloakFailure(error: unknown, where: string, realm: string): unknown {
  const sentence = describeAdminFailure(error, where, realm);
  return sentence === undefined ? error : new CliError(sentence);
}

export { diagnoseCimdState, knownProfileNames } from "../idp/cimd-diagnosis.ts";
