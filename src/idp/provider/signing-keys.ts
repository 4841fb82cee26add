import { generateKeyPairSync } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { calculateJwkThumbprint, type JWK } from "jose";
import {
  ensureServiceSecret,
  readServiceSecret,
  replaceServiceSecret,
  type SecretVault,
} from "../../store/service-secrets.ts";
import { secretsDir } from "../secrets.ts";

/**
 * The identity provider's token signing keys, one sealed secret of the store (`idp-signing-keys`), so
 * every replica signs and publishes the same keys. Before issue 16 they lived in
 * `<dataDir>/secrets/idp-signing-keys.json`: that file is imported once, when the store has no keys
 * yet, and not read afterwards. Three kinds of entry:
 * - `current`: signs every token issued from now on;
 * - `next`: published but not used yet, so verifiers that cache the JWKS already know it when it
 *   becomes current at the next rotation;
 * - `retired`: a former current key, still published until the tokens it signed have expired
 *   (`retiredAt` + the longest lifetime of a signed token), then dropped.
 */
export interface StoredSigningKey {
  kid: string;
  status: "current" | "next" | "retired";
  createdAt: string;
  retiredAt?: string;
  /** Private JWK (RS256). */
  jwk: JWK;
}

interface SigningKeyFile {
  keys: StoredSigningKey[];
}

const SIGNING_KEYS_FILE = "idp-signing-keys.json";
export const SIGNING_KEYS_SECRET = "idp-signing-keys";
export const SIGNING_ALG = "RS256";

function signingKeysPath(dataDir: string): string {
  return join(secretsDir(dataDir), SIGNING_KEYS_FILE);
}

async function newKey(status: StoredSigningKey["status"], now: Date): Promise<StoredSigningKey> {
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const exported = privateKey.export({ format: "jwk" }) as JWK;
  const kid = await calculateJwkThumbprint({ kty: exported.kty, n: exported.n, e: exported.e } as JWK);
  return {
    kid,
    status,
    createdAt: now.toISOString(),
    jwk: { ...exported, kid, alg: SIGNING_ALG, use: "sig" },
  };
}

function parseKeys(text: string, where: string): SigningKeyFile {
  let parsed: SigningKeyFile;
  try {
    parsed = JSON.parse(text) as SigningKeyFile;
  } catch (error) {
    throw new Error(`The signing keys in ${where} are not valid JSON (${(error as Error).message})`);
  }
  if (!Array.isArray(parsed?.keys) || !parsed.keys.some((k) => k.status === "current")) {
    throw new Error(`The signing keys in ${where} have no current key: restore them from a backup`);
  }
  return parsed;
}

/** The pre-store key file of a data directory, if there is one (imported once). */
function readKeyFile(file: string): string | undefined {
  try {
    const text = readFileSync(file, "utf8");
    parseKeys(text, file);
    return text;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

const STORE = "the store (secret idp-signing-keys)";

/** Drops retired keys whose tokens have all expired. */
function pruneRetired(file: SigningKeyFile, retentionSeconds: number, now: Date): SigningKeyFile {
  return {
    keys: file.keys.filter(
      (k) =>
        k.status !== "retired" ||
        !k.retiredAt ||
        Date.parse(k.retiredAt) + retentionSeconds * 1000 > now.getTime(),
    ),
  };
}

/** Publication order: the current key first (oidc-provider signs with the first matching key). */
function orderedKeys(file: SigningKeyFile): StoredSigningKey[] {
  const rank = { current: 0, next: 1, retired: 2 } as const;
  return [...file.keys].sort((a, b) => rank[a.status] - rank[b.status]);
}

interface LoadedSigningKeys {
  keys: StoredSigningKey[];
  /** The stored secret's version: a rotation anywhere changes it. */
  version: number;
}

/**
 * The keys to sign and publish with, created on the first call (a current and a next key), or imported
 * from `importFrom`'s key file when the store has none yet. Retired keys past their retention are left
 * out (and removed from the store at the next rotation).
 */
export async function loadSigningKeys(
  vault: SecretVault,
  retentionSeconds: number,
  options: { importFrom?: string; now?: Date } = {},
): Promise<LoadedSigningKeys> {
  const now = options.now ?? new Date();
  await ensureServiceSecret(vault, SIGNING_KEYS_SECRET, async () => {
    const imported = options.importFrom ? readKeyFile(signingKeysPath(options.importFrom)) : undefined;
    return imported ?? JSON.stringify({ keys: [await newKey("current", now), await newKey("next", now)] });
  });
  const stored = await readServiceSecret(vault, SIGNING_KEYS_SECRET);
  if (!stored) throw new Error(`The signing keys in ${STORE} could not be created`);
  const content = parseKeys(stored.value, STORE);
  return { keys: orderedKeys(pruneRetired(content, retentionSeconds, now)), version: stored.version };
}

interface RotationResult {
  current: string;
  next: string;
  retired: { kid: string; publishedUntil: string }[];
}

/**
 * Rotation: the `next` key (already published) becomes current, the current key is retired and stays
 * published for `retentionSeconds`, and a new `next` key is generated. Running replicas pick the
 * change up from the store within their key poll interval (2 s by default).
 */
export async function rotateSigningKeys(
  vault: SecretVault,
  retentionSeconds: number,
  options: { now?: Date; importFrom?: string } = {},
): Promise<RotationResult> {
  const now = options.now ?? new Date();
  await loadSigningKeys(vault, retentionSeconds, {
    now,
    ...(options.importFrom ? { importFrom: options.importFrom } : {}),
  });
  for (;;) {
    const stored = await readServiceSecret(vault, SIGNING_KEYS_SECRET);
    if (!stored) throw new Error(`The signing keys in ${STORE} disappeared during the rotation`);
    const content = pruneRetired(parseKeys(stored.value, STORE), retentionSeconds, now);
    const keys = content.keys.map((k): StoredSigningKey => {
      if (k.status === "current") return { ...k, status: "retired", retiredAt: now.toISOString() };
      if (k.status === "next") return { ...k, status: "current" };
      return k;
    });
    if (!keys.some((k) => k.status === "current")) keys.unshift(await newKey("current", now));
    const next = await newKey("next", now);
    keys.push(next);
    // Another rotation won the race: start again from its keys.
    if (!(await replaceServiceSecret(vault, SIGNING_KEYS_SECRET, stored.version, JSON.stringify({ keys })))) {
      continue;
    }
    const current = keys.find((k) => k.status === "current") as StoredSigningKey;
    return {
      current: current.kid,
      next: next.kid,
      retired: keys
        .filter((k) => k.status === "retired")
        .map((k) => ({
          kid: k.kid,
          publishedUntil: new Date(
            Date.parse(k.retiredAt ?? now.toISOString()) + retentionSeconds * 1000,
          ).toISOString(),
        })),
    };
  }
}

/** Public JWKS of stored keys (what /jwks serves), for in-process verification. */
export function publicJwks(keys: readonly StoredSigningKey[]): { keys: JWK[] } {
  return {
    keys: keys.map(({ jwk }) => ({
      kty: jwk.kty,
      n: jwk.n,
      e: jwk.e,
      kid: jwk.kid,
      alg: jwk.alg,
      use: jwk.use,
    })),
  };
}
