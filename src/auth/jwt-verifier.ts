import { createRemoteJWKSet, customFetch, errors, type JWTPayload, jwtVerify } from "jose";
import { type IssuerMetadata, issuerMetadata } from "./issuer-metadata.ts";

/** Asymmetric algorithms only: `none` and HMAC (a shared secret, or a public key misused as one) never verify. */
const ALLOWED_ALGORITHMS = [
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

interface JwtVerifierOptions {
  issuer: string;
  /** JWKS URL; discovered from the issuer's metadata when absent. */
  jwksUrl?: string | undefined;
  metadata?: IssuerMetadata;
  clockToleranceSeconds?: number;
  /** Minimum time between two JWKS fetches (an unknown kid triggers one). Default 30 s. */
  jwksCooldownMs?: number;
}

/** `unavailable`: the issuer's keys could not be obtained, so the token's validity is unknown. */
type VerifyResult = { ok: true; payload: JWTPayload } | { ok: false; reason: string; unavailable: boolean };

export interface JwtVerifier {
  verify(token: string, audience: string): Promise<VerifyResult>;
}

export function createJwtVerifier(options: JwtVerifierOptions): JwtVerifier {
  const metadata = options.metadata ?? issuerMetadata(options.issuer);
  let jwks: ReturnType<typeof createRemoteJWKSet> | undefined;

  const keySet = async () => {
    if (!jwks) {
      const url = options.jwksUrl ?? (await metadata.get()).jwks_uri;
      if (!url) throw new Error(`no jwks_uri in the metadata of ${options.issuer}`);
      // An unknown kid triggers one refetch; the cooldown rate-limits refetches under attack.
      jwks = createRemoteJWKSet(new URL(url), {
        cooldownDuration: options.jwksCooldownMs ?? 30_000,
        timeoutDuration: 5_000,
        [customFetch]: metadata.fetch,
      });
    }
    return jwks;
  };

  return {
    async verify(token, audience) {
      let keys: ReturnType<typeof createRemoteJWKSet>;
      try {
        keys = await keySet();
      } catch (error) {
        return {
          ok: false,
          unavailable: true,
          reason: `the token issuer cannot be reached (${(error as Error).message})`,
        };
      }
      const clockTolerance = options.clockToleranceSeconds ?? 30;
      try {
        const { payload } = await jwtVerify(token, keys, {
          issuer: options.issuer,
          audience,
          algorithms: ALLOWED_ALGORITHMS,
          clockTolerance,
          requiredClaims: ["exp"],
        });
        // jose checks iat only against a maximum age: a token "issued" in the future (a skewed or
        // forged issuer clock, a token minted to outlive its revocation) is refused here.
        if (typeof payload.iat === "number" && payload.iat > Date.now() / 1000 + clockTolerance) {
          return { ok: false, unavailable: false, reason: "the token's iat claim is in the future" };
        }
        return { ok: true, payload };
      } catch (error) {
        return describeJoseError(error);
      }
    },
  };
}

function describeJoseError(error: unknown): { ok: false; reason: string; unavailable: boolean } {
  const invalid = (reason: string) => ({ ok: false as const, reason, unavailable: false });
  if (error instanceof errors.JWTExpired) return invalid("the token has expired");
  if (error instanceof errors.JWTClaimValidationFailed)
    return invalid(`the token's ${error.claim} claim is not accepted`);
  if (error instanceof errors.JOSEAlgNotAllowed)
    return invalid("the token's signing algorithm is not accepted");
  if (error instanceof errors.JWSSignatureVerificationFailed)
    return invalid("the token's signature is invalid");
  if (error instanceof errors.JWKSNoMatchingKey) return invalid("the token was signed by an unknown key");
  if (error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid)
    return invalid("the token is malformed");
  if (error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid) {
    return { ok: false, reason: "the token issuer's keys could not be fetched", unavailable: true };
  }
  if (error instanceof TypeError || (error as { code?: string }).code === "ECONNREFUSED") {
    return { ok: false, reason: "the token issuer's keys could not be fetched", unavailable: true };
  }
  return invalid("the token could not be verified");
}
