import { readFileSync } from "node:fs";
import type { Kysely } from "kysely";
import { ConfigError } from "../config/load-config.ts";
import type { Settings } from "../config/settings.ts";
import type { Database } from "../store/schema.ts";
import { SecretsCipher, type SecretVault } from "../store/service-secrets.ts";
import { ensureSecretFile, readSecretFile, secretFilePath } from "./secrets.ts";

/** The file generated in the data directory when no key is configured (one machine, one data directory). */
const GENERATED_KEY_NAME = "store-secrets-key";

const HOW = "32 random bytes in base64 or hex (e.g. `openssl rand -base64 32`)";

/**
 * The key that seals the store's secrets: IMAGING_SECRETS_KEY, else the file IMAGING_SECRETS_KEY_FILE,
 * else a key generated once in DATA_DIR/secrets/store-secrets-key.secret. Never from the database: replicas on one
 * PostgreSQL must be given the same key (a replica with another key stops with a one-line error).
 */
export function loadSecretsCipher(
  settings: Pick<Settings, "secretsKey" | "secretsKeyFile" | "dataDir">,
  options: { generate?: boolean } = {},
): SecretsCipher {
  if (settings.secretsKey !== undefined) {
    return new SecretsCipher(decodeKey(settings.secretsKey, "IMAGING_SECRETS_KEY"), "IMAGING_SECRETS_KEY");
  }
  if (settings.secretsKeyFile !== undefined) {
    let text: string;
    try {
      text = readFileSync(settings.secretsKeyFile, "utf8");
    } catch (error) {
      throw new ConfigError(
        `IMAGING_SECRETS_KEY_FILE: cannot read ${settings.secretsKeyFile}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      );
    }
    const source = `IMAGING_SECRETS_KEY_FILE (${settings.secretsKeyFile})`;
    return new SecretsCipher(decodeKey(text.trim(), source), source);
  }
  const file = secretFilePath(settings.dataDir, GENERATED_KEY_NAME);
  const generated =
    options.generate === false
      ? readSecretFile(settings.dataDir, GENERATED_KEY_NAME)
      : ensureSecretFile(settings.dataDir, GENERATED_KEY_NAME);
  if (generated === undefined) {
    throw new ConfigError(
      `No secrets key: neither IMAGING_SECRETS_KEY, IMAGING_SECRETS_KEY_FILE nor ${file} is set`,
    );
  }
  return new SecretsCipher(decodeKey(generated, file), file);
}

export function secretVault(
  db: Kysely<Database>,
  settings: Pick<Settings, "secretsKey" | "secretsKeyFile" | "dataDir">,
): SecretVault {
  return { db, cipher: loadSecretsCipher(settings) };
}

function decodeKey(text: string, source: string): Buffer {
  let key: Buffer | undefined;
  if (/^[0-9a-fA-F]{64}$/.test(text)) key = Buffer.from(text, "hex");
  else if (/^[A-Za-z0-9+/_-]{43}=?$/.test(text)) key = Buffer.from(text, "base64url");
  if (key?.length !== 32) throw new ConfigError(`${source} must hold ${HOW}; it does not (value not shown)`);
  return key;
}
