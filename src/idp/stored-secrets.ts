import { randomBytes } from "node:crypto";
import { ensureServiceSecret, readServiceSecret, type SecretVault } from "../store/service-secrets.ts";
import { readSecretFile } from "./secrets.ts";

/**
 * A secret the platform generates for itself (cookie and CSRF keys, the `mcp-token-exchange`
 * secret), kept sealed in the store so every replica has the same. A data directory from before the
 * store kept them (`DATA_DIR/secrets/<name>.secret`) is imported once: when the store has no value
 * yet, the file's is taken; afterwards the file is not read any more.
 */
export function ensureStoredSecret(vault: SecretVault, name: string, importFrom?: string): Promise<string> {
  return ensureServiceSecret(
    vault,
    name,
    () =>
      (importFrom ? readSecretFile(importFrom, name) : undefined) ?? randomBytes(32).toString("base64url"),
  );
}

export async function readStoredSecret(vault: SecretVault, name: string): Promise<string | undefined> {
  return (await readServiceSecret(vault, name))?.value;
}
