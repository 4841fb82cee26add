import { generateKeyPairSync, randomBytes } from "node:crypto";
import { chmodSync, linkSync, mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { calculateJwkThumbprint, type JWK } from "jose";
import { secretsDir } from "../secrets.ts";

/**
 * The identity provider's token signing keys, in `<dataDir>/secrets/idp-signing-keys.json` (mode
 * 0600). Three kinds of entry:
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

export interface SigningKeyFile {
  keys: StoredSigningKey[];
}

export const SIGNING_KEYS_FILE = "idp-signing-keys.json";
export const SIGNING_ALG = "RS256";

export function signingKeysPath(dataDir: string): string {
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

function readKeyFile(file: string): SigningKeyFile | undefined {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  let parsed: SigningKeyFile;
  try {
    parsed = JSON.parse(text) as SigningKeyFile;
  } catch (error) {
    throw new Error(`The signing key file ${file} is not valid JSON (${(error as Error).message})`);
  }
  if (!Array.isArray(parsed?.keys) || !parsed.keys.some((k) => k.status === "current")) {
    throw new Error(`The signing key file ${file} has no current key: restore it from a backup or delete it`);
  }
  return parsed;
}

function writeKeyFile(file: string, content: SigningKeyFile, exclusive: boolean): boolean {
  const dir = join(file, "..");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const temporary = join(dir, `.${SIGNING_KEYS_FILE}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
  writeFileSync(temporary, `${JSON.stringify(content, null, 2)}\n`, { mode: 0o600, flag: "wx" });
  if (process.platform !== "win32") chmodSync(temporary, 0o600);
  if (!exclusive) {
    renameSync(temporary, file);
    return true;
  }
  try {
    // The first process to create the file wins; the others read its keys.
    linkSync(temporary, file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  } finally {
    try {
      unlinkSync(temporary);
    } catch {
      // already renamed
    }
  }
}

/** Drops retired keys whose tokens have all expired. */
export function pruneRetired(file: SigningKeyFile, retentionSeconds: number, now: Date): SigningKeyFile {
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
export function orderedKeys(file: SigningKeyFile): StoredSigningKey[] {
  const rank = { current: 0, next: 1, retired: 2 } as const;
  return [...file.keys].sort((a, b) => rank[a.status] - rank[b.status]);
}

/**
 * The keys to sign and publish with, created on the first call (a current and a next key). Retired
 * keys past their retention are left out (and removed from the file when it is rewritten).
 */
export async function loadSigningKeys(
  dataDir: string,
  retentionSeconds: number,
  now = new Date(),
): Promise<StoredSigningKey[]> {
  const file = signingKeysPath(dataDir);
  let content = readKeyFile(file);
  if (!content) {
    const created = { keys: [await newKey("current", now), await newKey("next", now)] };
    content = writeKeyFile(file, created, true) ? created : readKeyFile(file);
    if (!content) throw new Error(`The signing key file ${file} could not be created`);
  }
  return orderedKeys(pruneRetired(content, retentionSeconds, now));
}

export interface RotationResult {
  file: string;
  current: string;
  next: string;
  retired: { kid: string; publishedUntil: string }[];
}

/**
 * Rotation: the `next` key (already published) becomes current, the current key is retired and stays
 * published for `retentionSeconds`, and a new `next` key is generated. Running services pick the
 * change up from the file within seconds.
 */
export async function rotateSigningKeys(
  dataDir: string,
  retentionSeconds: number,
  now = new Date(),
): Promise<RotationResult> {
  const file = signingKeysPath(dataDir);
  await loadSigningKeys(dataDir, retentionSeconds, now);
  const content = pruneRetired(readKeyFile(file) as SigningKeyFile, retentionSeconds, now);
  const keys = content.keys.map((k): StoredSigningKey => {
    if (k.status === "current") return { ...k, status: "retired", retiredAt: now.toISOString() };
    if (k.status === "next") return { ...k, status: "current" };
    return k;
  });
  if (!keys.some((k) => k.status === "current")) keys.unshift(await newKey("current", now));
  const next = await newKey("next", now);
  keys.push(next);
  writeKeyFile(file, { keys }, false);
  const current = keys.find((k) => k.status === "current") as StoredSigningKey;
  return {
    file,
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
