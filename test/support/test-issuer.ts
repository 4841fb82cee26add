import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, type JWK, type JWTPayload, SignJWT } from "jose";

/**
 * A stand-in identity provider for tests written before the embedded one exists: it publishes OIDC
 * discovery and a JWKS on a real port and signs platform tokens with its private key.
 */
export interface TestIssuer {
  issuer: string;
  jwksUrl: string;
  sign(
    claims: JWTPayload,
    options?: { expiresIn?: string | number; notBefore?: string | number; kid?: string },
  ): Promise<string>;
  publicJwk: JWK;
  close(): Promise<void>;
}

export async function startTestIssuer(): Promise<TestIssuer> {
  const { privateKey, publicKey } = await generateKeyPair("RS256", { extractable: true });
  const publicJwk = { ...(await exportJWK(publicKey)), kid: "test-key-1", alg: "RS256", use: "sig" };
  let base = "";
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? "").split("?")[0];
    res.setHeader("content-type", "application/json");
    if (path === "/realms/test/.well-known/openid-configuration") {
      res.end(JSON.stringify({ issuer: `${base}/realms/test`, jwks_uri: `${base}/realms/test/jwks` }));
    } else if (path === "/realms/test/jwks") {
      res.end(JSON.stringify({ keys: [publicJwk] }));
    } else {
      res.statusCode = 404;
      res.end(JSON.stringify({ error: "not_found" }));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const issuer = `${base}/realms/test`;
  return {
    issuer,
    jwksUrl: `${issuer}/jwks`,
    publicJwk,
    async sign(claims, options = {}) {
      const jwt = new SignJWT({ ...claims })
        .setProtectedHeader({ alg: "RS256", kid: options.kid ?? "test-key-1", typ: "at+jwt" })
        .setIssuedAt()
        .setIssuer(typeof claims.iss === "string" ? claims.iss : issuer)
        .setAudience(claims.aud ?? "imaging-api")
        .setExpirationTime(options.expiresIn ?? "5m");
      if (options.notBefore !== undefined) jwt.setNotBefore(options.notBefore);
      return jwt.sign(privateKey);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
