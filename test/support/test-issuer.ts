import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, type JWK, type JWTPayload, jwtVerify, SignJWT } from "jose";

/**
 * A stand-in identity provider for tests written before the embedded one exists: it publishes OIDC
 * discovery and a JWKS on a real port, signs tokens, and answers RFC 8693 token exchange for the
 * confidential client `mcp-token-exchange` from its own user table.
 */
export interface TestIssuer {
  issuer: string;
  jwksUrl: string;
  publicJwk: JWK;
  clientSecret: string;
  sign(
    claims: JWTPayload,
    options?: {
      expiresIn?: string | number;
      notBefore?: string | number;
      /** iat: now unless given (epoch seconds). */
      issuedAt?: number;
      kid?: string;
      alg?: string;
    },
  ): Promise<string>;
  /** An access token as an AI client would hold it for an MCP resource. */
  signMcp(
    subject: string,
    resource: string,
    options?: { scope?: string; expiresIn?: string | number },
  ): Promise<string>;
  setUser(subject: string, rights: { roles: string[]; applications: string[] }): void;
  /** Publishes a second signing key; `sign(..., { kid: "test-key-2" })` signs with it. */
  rotate(): Promise<void>;
  /** JWKS documents served so far. */
  readonly jwksFetches: number;
  /** Exchanges answered so far. */
  readonly exchanges: number;
  /** Delay added to each exchange answer (to observe concurrent requests sharing one). */
  exchangeDelayMs: number;
  stop(): Promise<void>;
  close(): Promise<void>;
}

export const EXCHANGE_CLIENT_ID = "mcp-token-exchange";

export async function startTestIssuer(): Promise<TestIssuer> {
  const { privateKey, publicKey } = await generateKeyPair("RS256", { extractable: true });
  const publicJwk = { ...(await exportJWK(publicKey)), kid: "test-key-1", alg: "RS256", use: "sig" };
  const keys = new Map([["test-key-1", privateKey]]);
  const published = [publicJwk];
  let jwksFetches = 0;
  const users = new Map<string, { roles: string[]; applications: string[] }>();
  const clientSecret = "test-exchange-secret";
  let base = "";
  let exchanges = 0;
  const state = { exchangeDelayMs: 0 };

  const sign = async (
    claims: JWTPayload,
    options: {
      expiresIn?: string | number;
      notBefore?: string | number;
      issuedAt?: number;
      kid?: string;
    } = {},
  ) => {
    const jwt = new SignJWT({ jti: randomUUID(), ...claims })
      .setProtectedHeader({ alg: "RS256", kid: options.kid ?? "test-key-1", typ: "at+jwt" })
      .setIssuedAt(options.issuedAt)
      .setIssuer(typeof claims.iss === "string" ? claims.iss : `${base}/realms/test`)
      .setAudience(claims.aud ?? "imaging-api")
      .setExpirationTime(options.expiresIn ?? "5m");
    if (options.notBefore !== undefined) jwt.setNotBefore(options.notBefore);
    return jwt.sign(keys.get(options.kid ?? "test-key-1") ?? privateKey);
  };

  const exchange = async (form: URLSearchParams, authorization: string | undefined) => {
    // RFC 6749 section 2.3.1: both parts are form-urlencoded before base64.
    const decoded = Buffer.from((authorization ?? "").replace(/^Basic /i, ""), "base64").toString("utf8");
    const [id = "", secret = ""] = decoded
      .split(":")
      .map((part) => decodeURIComponent(part.replace(/\+/g, " ")));
    if (id !== EXCHANGE_CLIENT_ID || secret !== clientSecret)
      return { status: 401, body: { error: "invalid_client" } };
    if (form.get("grant_type") !== "urn:ietf:params:oauth:grant-type:token-exchange") {
      return { status: 400, body: { error: "unsupported_grant_type" } };
    }
    try {
      const { payload } = await jwtVerify(form.get("subject_token") ?? "", publicKey, {
        issuer: `${base}/realms/test`,
        audience: EXCHANGE_CLIENT_ID,
      });
      const rights = users.get(String(payload.sub));
      if (!rights)
        return { status: 400, body: { error: "invalid_grant", error_description: "unknown user" } };
      exchanges++;
      if (state.exchangeDelayMs > 0) await new Promise((r) => setTimeout(r, state.exchangeDelayMs));
      const lifetime = Math.max(1, Math.min(300, (payload.exp ?? 0) - Math.floor(Date.now() / 1000)));
      const accessToken = await sign(
        { sub: payload.sub, aud: form.get("audience") ?? "imaging-api", ...rights },
        { expiresIn: `${lifetime}s` },
      );
      return {
        status: 200,
        body: {
          access_token: accessToken,
          issued_token_type: "urn:ietf:params:oauth:token-type:access_token",
          token_type: "Bearer",
          expires_in: lifetime,
        },
      };
    } catch (error) {
      return { status: 400, body: { error: "invalid_grant", error_description: (error as Error).message } };
    }
  };

  const server: Server = createServer((req, res) => {
    const path = (req.url ?? "").split("?")[0];
    res.setHeader("content-type", "application/json");
    const send = (status: number, body: unknown) => {
      res.statusCode = status;
      res.end(JSON.stringify(body));
    };
    if (
      path === "/realms/test/.well-known/openid-configuration" ||
      path === "/realms/test/.well-known/oauth-authorization-server"
    ) {
      send(200, {
        issuer: `${base}/realms/test`,
        jwks_uri: `${base}/realms/test/jwks`,
        token_endpoint: `${base}/realms/test/token`,
        authorization_endpoint: `${base}/realms/test/auth`,
        response_types_supported: ["code"],
        grant_types_supported: ["authorization_code", "urn:ietf:params:oauth:grant-type:token-exchange"],
        code_challenge_methods_supported: ["S256"],
      });
    } else if (path === "/realms/test/jwks") {
      jwksFetches++;
      send(200, { keys: published });
    } else if (path === "/realms/test/token" && req.method === "POST") {
      let raw = "";
      req.on("data", (d) => {
        raw += d;
      });
      req.on("end", () => {
        exchange(new URLSearchParams(raw), req.headers.authorization).then(
          ({ status, body }) => send(status, body),
          () => send(500, { error: "server_error" }),
        );
      });
    } else {
      send(404, { error: "not_found" });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const issuer = `${base}/realms/test`;
  const stop = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return {
    issuer,
    jwksUrl: `${issuer}/jwks`,
    publicJwk,
    clientSecret,
    sign,
    signMcp: (subject, resource, options = {}) =>
      sign(
        {
          sub: subject,
          aud: [resource, EXCHANGE_CLIENT_ID],
          scope: options.scope ?? "mcp:tools mcp:resources mcp:prompts",
        },
        { expiresIn: options.expiresIn ?? "5m" },
      ),
    setUser: (subject, rights) => users.set(subject, rights),
    async rotate() {
      const next = await generateKeyPair("RS256", { extractable: true });
      keys.set("test-key-2", next.privateKey);
      published.push({ ...(await exportJWK(next.publicKey)), kid: "test-key-2", alg: "RS256", use: "sig" });
    },
    get jwksFetches() {
      return jwksFetches;
    },
    get exchanges() {
      return exchanges;
    },
    get exchangeDelayMs() {
      return state.exchangeDelayMs;
    },
    set exchangeDelayMs(value: number) {
      state.exchangeDelayMs = value;
    },
    stop,
    close: async () => {
      if (server.listening) await stop();
    },
  };
}
