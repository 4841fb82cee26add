import { createRemoteJWKSet, errors, type JWTPayload, jwtVerify } from "jose";

/** Asymmetric algorithms only: `none` and HMAC (a shared secret, or a public key misused as one) never verify. */
export const ALLOWED_ALGORITHMS = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
];

export interface JwtVerifierOptions {
  issuer: string;
  audience: string;
  /** JWKS URL; discovered from the issuer's metadata when absent. */
  jwksUrl?: string | undefined;
  clockToleranceSeconds?: number;
}

export type VerifyResult = { ok: true; payload: JWTPayload } | { ok: false; reason: string };

export interface JwtVerifier {
  verify(token: string): Promise<VerifyResult>;
}

export function createJwtVerifier(options: JwtVerifierOptions): JwtVerifier {
  let jwks: ReturnType<typeof createRemoteJWKSet> | undefined;
  let discovering: Promise<ReturnType<typeof createRemoteJWKSet>> | undefined;

  const keySet = async () => {
    if (jwks) return jwks;
    discovering ??= (async () => {
      const url = options.jwksUrl ?? (await discoverJwksUri(options.issuer));
      jwks = createRemoteJWKSet(new URL(url), { cooldownDuration: 30_000, timeoutDuration: 5_000 });
      return jwks;
    })().finally(() => {
      discovering = undefined;
    });
    return discovering;
  };

  return {
    async verify(token) {
      let keys: ReturnType<typeof createRemoteJWKSet>;
      try {
        keys = await keySet();
      } catch (error) {
        return { ok: false, reason: `the token issuer cannot be reached (${(error as Error).message})` };
      }
      try {
        const { payload } = await jwtVerify(token, keys, {
          issuer: options.issuer,
          audience: options.audience,
          algorithms: ALLOWED_ALGORITHMS,
          clockTolerance: options.clockToleranceSeconds ?? 30,
          requiredClaims: ["exp"],
        });
        return { ok: true, payload };
      } catch (error) {
        return { ok: false, reason: describeJoseError(error) };
      }
    },
  };
}

async function discoverJwksUri(issuer: string): Promise<string> {
  const base = issuer.replace(/\/$/, "");
  for (const url of [
    `${base}/.well-known/openid-configuration`,
    `${base}/.well-known/oauth-authorization-server`,
  ]) {
    const response = await fetch(url, {
      signal: AbortSignal.timeout(5_000),
      headers: { accept: "application/json" },
    });
    if (!response.ok) continue;
    const metadata = (await response.json()) as { jwks_uri?: unknown };
    if (typeof metadata.jwks_uri === "string") return metadata.jwks_uri;
  }
  throw new Error(`no jwks_uri in the metadata of ${issuer}`);
}

function describeJoseError(error: unknown): string {
  if (error instanceof errors.JWTExpired) return "the token has expired";
  if (error instanceof errors.JWTClaimValidationFailed)
    return `the token's ${error.claim} claim is not accepted`;
  if (error instanceof errors.JOSEAlgNotAllowed) return "the token's signing algorithm is not accepted";
  if (error instanceof errors.JWSSignatureVerificationFailed) return "the token's signature is invalid";
  if (error instanceof errors.JWKSNoMatchingKey) return "the token was signed by an unknown key";
  if (error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid)
    return "the token is malformed";
  if (error instanceof errors.JWKSTimeout) return "the token issuer's keys could not be fetched in time";
  return "the token could not be verified";
}
