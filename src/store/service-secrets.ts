import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";
import type { Kysely } from "kysely";
import type { Database, ServiceSecretsTable } from "./schema.ts";

/** A sealed secret that this process cannot open: one line naming the fix, never the secret. */
export class SecretsKeyError extends Error {}

/**
 * Seals and opens the secrets kept in the store. The key comes from the environment or a file (see
 * src/idp/secrets-key.ts), never from the database: a copy of the database alone reveals no secret.
 */
export class SecretsCipher {
  readonly keyId: string;
  readonly #key: Buffer;
  /** Where the key came from, for messages (e.g. `IMAGING_SECRETS_KEY`). */
  readonly source: string;

  constructor(key: Buffer, source: string) {
    if (key.length !== 32) throw new SecretsKeyError(`The secrets key from ${source} must be 32 bytes`);
    this.#key = key;
    this.source = source;
    this.keyId = createHash("sha256")
      .update("imaging-secrets-key-id\0")
      .update(key)
      .digest("hex")
      .slice(0, 16);
  }

  seal(name: string, plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.#key, iv);
    cipher.setAAD(Buffer.from(name, "utf8"));
    const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
    return `v1.${Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64url")}`;
  }

  open(name: string, row: Pick<ServiceSecretsTable, "sealed" | "key_id">): string {
    if (row.key_id !== this.keyId) {
      throw new SecretsKeyError(
        `The store's secret ${name} was sealed with another key (key id ${row.key_id}, this process has ${this.keyId} from ${this.source}): give every replica the same IMAGING_SECRETS_KEY or IMAGING_SECRETS_KEY_FILE`,
      );
    }
    const raw = row.sealed.startsWith("v1.")
      ? Buffer.from(row.sealed.slice(3), "base64url")
      : Buffer.alloc(0);
    try {
      if (raw.length < 28) throw new Error("too short");
      const decipher = createDecipheriv("aes-256-gcm", this.#key, raw.subarray(0, 12));
      decipher.setAAD(Buffer.from(name, "utf8"));
      decipher.setAuthTag(raw.subarray(12, 28));
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8");
    } catch {
      throw new SecretsKeyError(
        `The store's secret ${name} is damaged (it does not open with its key ${this.keyId}): restore the service_secrets table from a backup, or delete its row to generate a new secret`,
      );
    }
  }
}

/** The store's secrets as one process sees them: the database and the key that opens them. */
export interface SecretVault {
  db: Kysely<Database>;
  cipher: SecretsCipher;
}

interface StoredSecret {
  value: string;
  version: number;
}

export async function readServiceSecret(vault: SecretVault, name: string): Promise<StoredSecret | undefined> {
  const row = await vault.db
    .selectFrom("service_secrets")
    .select(["sealed", "key_id", "version"])
    .where("name", "=", name)
    .executeTakeFirst();
  return row ? { value: vault.cipher.open(name, row), version: Number(row.version) } : undefined;
}

/** The version of a secret (a rotation increments it), without opening it: what replicas poll. */
export async function serviceSecretVersion(db: Kysely<Database>, name: string): Promise<number | undefined> {
  const row = await db
    .selectFrom("service_secrets")
    .select("version")
    .where("name", "=", name)
    .executeTakeFirst();
  return row ? Number(row.version) : undefined;
}

/**
 * The secret stored under `name`, created from `initial()` when absent. Replicas starting together all
 * end up with the first writer's value (insert-if-absent, then read).
 */
export async function ensureServiceSecret(
  vault: SecretVault,
  name: string,
  initial: () => string | Promise<string>,
): Promise<string> {
  const existing = await readServiceSecret(vault, name);
  if (existing) return existing.value;
  const value = await initial();
  await vault.db
    .insertInto("service_secrets")
    .values({
      name,
      sealed: vault.cipher.seal(name, value),
      key_id: vault.cipher.keyId,
      version: 1,
      updated_at: Date.now(),
    })
    .onConflict((oc) => oc.column("name").doNothing())
    .execute();
  const stored = await readServiceSecret(vault, name);
  if (!stored) throw new Error(`The store's secret ${name} could not be created`);
  return stored.value;
}

/**
 * Replaces a secret if it is still at `expectedVersion` (compare-and-set, so two rotations at once do
 * not lose one another's keys). Returns whether it was replaced.
 */
export async function replaceServiceSecret(
  vault: SecretVault,
  name: string,
  expectedVersion: number,
  value: string,
): Promise<boolean> {
  const result = await vault.db
    .updateTable("service_secrets")
    .set({
      sealed: vault.cipher.seal(name, value),
      key_id: vault.cipher.keyId,
      version: expectedVersion + 1,
      updated_at: Date.now(),
    })
    .where("name", "=", name)
    .where("version", "=", expectedVersion)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
