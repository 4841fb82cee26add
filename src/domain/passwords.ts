import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from "node:crypto";

/**
 * Password hashing for the embedded identity provider's users: scrypt (memory-hard), encoded
 * self-describing as `scrypt$N$r$p$salt$hash` (salt and hash in base64url) so the parameters can be
 * raised later: hashes made with other parameters still verify, and `needsRehash` tells when to
 * replace them (at the next successful sign-in).
 */

interface ScryptParameters {
  /** CPU/memory cost, a power of two. Memory used: 128 * N * r bytes (32 MiB for 2^15, r = 8). */
  N: number;
  r: number;
  p: number;
  saltBytes: number;
  keyBytes: number;
}

export const CURRENT_PARAMETERS: Readonly<ScryptParameters> = Object.freeze({
  N: 2 ** 15,
  r: 8,
  p: 1,
  saltBytes: 16,
  keyBytes: 32,
});

export const MIN_PASSWORD_LENGTH = 12;
const MAX_PASSWORD_LENGTH = 1024;

/**
 * Bounds on what a stored hash may ask for, so a tampered hash cannot exhaust memory or time. Keys
 * shorter than 32 bytes are refused: a truncated key is a prefix of the full one and would verify.
 */
const LIMITS = {
  maxN: 2 ** 20,
  maxR: 32,
  maxP: 16,
  maxMemory: 256 * 1024 * 1024,
  minSalt: 16,
  maxSalt: 64,
  minKey: 32,
  maxKey: 128,
};

const PREFIX = "scrypt";
const BASE64URL = /^[A-Za-z0-9_-]+$/;
const DECIMAL = /^[1-9][0-9]{0,9}$/;

/** Why a password is refused, as one sentence, or undefined when it is acceptable. */
export function passwordProblem(password: string): string | undefined {
  const length = [...password].length;
  if (length < MIN_PASSWORD_LENGTH) {
    return `The password must be at least ${MIN_PASSWORD_LENGTH} characters long (it has ${length})`;
  }
  if (length > MAX_PASSWORD_LENGTH) {
    return `The password must be at most ${MAX_PASSWORD_LENGTH} characters long (it has ${length})`;
  }
  return undefined;
}

/** A strong random password (144 bits, 24 characters of base64url), for a person to copy once. */
export function generatePassword(): string {
  return randomBytes(18).toString("base64url");
}

/** Hashes with the current parameters and a fresh random salt. Does not check the password rules. */
export async function hashPassword(password: string): Promise<string> {
  const params = CURRENT_PARAMETERS;
  const salt = randomBytes(params.saltBytes);
  const key = await derive(password, salt, params);
  return encode(params, salt, key);
}

/**
 * True when `password` matches `encoded`, compared in constant time. A malformed or tampered hash
 * never matches. With `encoded` undefined (no such user) the work of a real verification is still
 * done against a dummy hash and false is returned, so the time taken does not tell whether the
 * user exists.
 */
export async function verifyPassword(password: string, encoded: string | undefined): Promise<boolean> {
  const parsed = encoded === undefined ? undefined : decode(encoded);
  if (!parsed) {
    await verifyDummy(password);
    return false;
  }
  let actual: Buffer;
  try {
    actual = await derive(password, parsed.salt, parsed.params);
  } catch {
    return false;
  }
  return actual.length === parsed.key.length && timingSafeEqual(actual, parsed.key);
}

/** True when `encoded` was not made with the current parameters (or cannot be read at all). */
export function needsRehash(encoded: string): boolean {
  const parsed = decode(encoded);
  if (!parsed) return true;
  const current = CURRENT_PARAMETERS;
  return (
    parsed.params.N !== current.N ||
    parsed.params.r !== current.r ||
    parsed.params.p !== current.p ||
    parsed.salt.length !== current.saltBytes ||
    parsed.key.length !== current.keyBytes
  );
}

/** The parameters an encoded hash was made with, or undefined when it is not a valid scrypt hash. */
export function hashParameters(encoded: string): ScryptParameters | undefined {
  return decode(encoded)?.params;
}

let dummyHash: Promise<string> | undefined;

async function verifyDummy(password: string): Promise<void> {
  dummyHash ??= hashPassword(generatePassword());
  const parsed = decode(await dummyHash);
  if (!parsed) return;
  const actual = await derive(password, parsed.salt, parsed.params);
  timingSafeEqual(actual, parsed.key);
}

function derive(password: string, salt: Buffer, params: ScryptParameters): Promise<Buffer> {
  const options: ScryptOptions = {
    N: params.N,
    r: params.r,
    p: params.p,
    // Node refuses when 128 * N * r reaches maxmem (default 32 MiB): leave room above the need.
    maxmem: 128 * params.N * params.r * 2,
  };
  return new Promise((resolve, reject) => {
    // NFC so the same password typed on different systems gives the same bytes.
    scrypt(password.normalize("NFC"), salt, params.keyBytes, options, (error, key) =>
      error ? reject(error) : resolve(key),
    );
  });
}

function encode(params: ScryptParameters, salt: Buffer, key: Buffer): string {
  return [PREFIX, params.N, params.r, params.p, salt.toString("base64url"), key.toString("base64url")].join(
    "$",
  );
}

function decode(encoded: string): { params: ScryptParameters; salt: Buffer; key: Buffer } | undefined {
  const parts = encoded.split("$");
  if (parts.length !== 6) return undefined;
  const [prefix, nText, rText, pText, saltText, keyText] = parts as [
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  if (prefix !== PREFIX) return undefined;
  if (![nText, rText, pText].every((t) => DECIMAL.test(t))) return undefined;
  if (!BASE64URL.test(saltText) || !BASE64URL.test(keyText)) return undefined;
  const N = Number(nText);
  const r = Number(rText);
  const p = Number(pText);
  if (N < 2 || N > LIMITS.maxN || (N & (N - 1)) !== 0) return undefined;
  if (r > LIMITS.maxR || p > LIMITS.maxP || 128 * N * r > LIMITS.maxMemory) return undefined;
  const salt = Buffer.from(saltText, "base64url");
  const key = Buffer.from(keyText, "base64url");
  // Canonical encoding only: a re-encoded value must give back the same text.
  if (salt.toString("base64url") !== saltText || key.toString("base64url") !== keyText) return undefined;
  if (salt.length < LIMITS.minSalt || salt.length > LIMITS.maxSalt) return undefined;
  if (key.length < LIMITS.minKey || key.length > LIMITS.maxKey) return undefined;
  return { params: { N, r, p, saltBytes: salt.length, keyBytes: key.length }, salt, key };
}
