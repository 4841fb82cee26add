import { randomBytes } from "node:crypto";
import fastifyCookie from "@fastify/cookie";
import replyFrom from "@fastify/reply-from";
import fastifyStatic from "@fastify/static";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { decodeJwt } from "jose";
import type { Kysely } from "kysely";
import * as oauth from "oauth4webapi";
import type { IssuerMetadata } from "../../auth/issuer-metadata.ts";
import type { TokenExchanger } from "../../auth/token-exchange.ts";
import type { ConsoleSessionInfo } from "../../contracts/console-session.ts";
import {
  type ConsoleSession,
  createConsoleSession,
  deleteConsoleSession,
  findConsoleSession,
  purgeExpiredConsoleState,
  savePendingSignIn,
  takePendingSignIn,
  updateConsoleTokens,
} from "../../store/console-sessions.ts";
import type { Database } from "../../store/schema.ts";
import { forwardableResponseHeaders } from "../hop-by-hop.ts";
import { sendGatewayProblem } from "../problem.ts";
import { rawBodyOptions } from "../raw-body.ts";
import { CONSOLE_PAGE_HEADERS, type ConsoleBuild } from "./assets.ts";
import { CSRF_HEADER, csrfRefusal, isSafeMethod } from "./csrf.ts";
import { messagePage } from "./message-page.ts";
import { ConsoleSignInError, consoleOidcClient } from "./oidc-client.ts";

export interface ConsoleOptions {
  baseUrl: string;
  idp: "embedded" | "keycloak";
  version: string;
  db: Kysely<Database>;
  metadata: IssuerMetadata;
  exchanger: TokenExchanger;
  restUpstreamUrl: string;
  build: ConsoleBuild;
  /** The MCP resource the console's access token is issued for (then exchanged). */
  mcpResource: string;
}

const COOKIE = "imaging_console";
/** A console session lasts at most this long, refreshes included; then the user signs in again. */
const SESSION_LIFETIME_MS = 12 * 3600 * 1000;
/** An authorization request left unfinished is forgotten after this. */
const SIGN_IN_LIFETIME_MS = 10 * 60 * 1000;
/** Tokens are refreshed this long before they expire. */
const REFRESH_MARGIN_MS = 30_000;

const randomToken = () => randomBytes(32).toString("base64url");

/** Only a path of this gateway's console: never another host (open redirect) or an odd scheme. */
export function safeReturnPath(value: unknown): string {
  if (typeof value !== "string" || !/^\/(?!\/)/.test(value) || value.includes("\\")) return "/";
  return value.startsWith("/console") || value === "/" || value.startsWith("/?") ? value : "/";
}

/**
 * The web console, the gateway acting as its backend-for-frontend: the built pages and assets, the
 * sign-in (authorization code + PKCE as the first-party client), a session cookie naming a session kept in
 * the store (any replica serves it), and `/console/api/*` forwarded to the REST API with the session's
 * token exchanged for a platform token, so the REST API applies the user's own rights.
 */
export async function consoleRoutes(app: FastifyInstance, options: ConsoleOptions): Promise<void> {
  const { db, baseUrl } = options;
  const secure = baseUrl.startsWith("https:");
  const oidc = consoleOidcClient({ baseUrl, metadata: options.metadata, mcpResource: options.mcpResource });
  const refreshing = new Map<string, Promise<ConsoleSession | undefined>>();

  await app.register(fastifyCookie);
  await app.register(fastifyStatic, {
    root: `${options.build.dir}/assets`,
    prefix: "/console/assets/",
    index: false,
    // Asset names carry a hash of their content: a new build has new names.
    immutable: true,
    maxAge: 365 * 24 * 3600 * 1000,
    setHeaders: (reply) => {
      reply.header("x-content-type-options", "nosniff");
    },
  });
  await app.register(replyFrom, { base: options.restUpstreamUrl });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", { parseAs: "buffer", bodyLimit: 4 * 1024 * 1024 }, (_r, body, done) =>
    done(null, body),
  );

  const purge = setInterval(() => {
    purgeExpiredConsoleState(db).catch((error) =>
      app.log.warn({ err: error }, "console session purge failed"),
    );
  }, 600_000);
  purge.unref();
  app.addHook("onClose", async () => clearInterval(purge));

  const cookieOptions = { path: "/", httpOnly: true, sameSite: "lax" as const, secure };

  /** The request's session with a live access token (refreshed when near expiry), or undefined. */
  const activeSession = async (request: FastifyRequest) => {
    const id = request.cookies[COOKIE];
    if (!id) return undefined;
    const session = await findConsoleSession(db, id);
    if (!session) return undefined;
    if (session.accessExpiresAt - REFRESH_MARGIN_MS > Date.now()) return { id, session };
    let pending = refreshing.get(id);
    if (!pending) {
      pending = refreshSession(id, session).finally(() => refreshing.delete(id));
      refreshing.set(id, pending);
    }
    const refreshed = await pending;
    return refreshed ? { id, session: refreshed } : undefined;
  };

  const refreshSession = async (id: string, session: ConsoleSession): Promise<ConsoleSession | undefined> => {
    if (session.refreshToken) {
      try {
        const tokens = await oidc.refresh(session.refreshToken);
        await updateConsoleTokens(db, id, tokens);
        return { ...session, ...tokens, username: session.username };
      } catch (error) {
        app.log.info({ reason: (error as Error).message }, "console: token refresh failed");
      }
    }
    // Another replica may have refreshed (and rotated the refresh token) meanwhile: its tokens will do.
    const again = await findConsoleSession(db, id);
    if (again && again.accessExpiresAt > Date.now()) return again;
    return undefined;
  };

  const platformToken = async (session: ConsoleSession) =>
    (await options.exchanger.exchange(session.accessToken, session.accessExpiresAt)).accessToken;

  const serveIndex = async (request: FastifyRequest, reply: FastifyReply) => {
    if (!(await activeSession(request))) {
      const returnTo = encodeURIComponent(safeReturnPath(request.url));
      return reply.redirect(`/console/sign-in?return_to=${returnTo}`, 302);
    }
    if (options.build.indexHtml === undefined) {
      return messagePage(
        reply,
        503,
        "Console not built",
        "The web console was not built: run npm run build.",
      );
    }
    return reply.headers(CONSOLE_PAGE_HEADERS).type("text/html; charset=utf-8").send(options.build.indexHtml);
  };
  app.get("/", serveIndex);
  app.get("/console", serveIndex);
  app.get("/console/*", serveIndex);

  app.get("/console/sign-in", async (request, reply) => {
    const state = oauth.generateRandomState();
    const codeVerifier = oauth.generateRandomCodeVerifier();
    const nonce = oauth.generateRandomNonce();
    const returnTo = safeReturnPath((request.query as Record<string, unknown>).return_to);
    let location: string;
    try {
      location = await oidc.authorizationUrl({ state, codeVerifier, nonce });
    } catch (error) {
      request.log.warn({ err: error }, "console sign-in: identity provider unavailable");
      return messagePage(
        reply,
        503,
        "Sign-in is unavailable",
        "The identity provider cannot be reached: try again shortly.",
      );
    }
    await savePendingSignIn(db, state, { codeVerifier, nonce, returnTo }, Date.now() + SIGN_IN_LIFETIME_MS);
    return reply.header("cache-control", "no-store").redirect(location, 302);
  });

  app.get("/console/callback", async (request, reply) => {
    const url = new URL(request.url, baseUrl);
    const state = url.searchParams.get("state");
    const pending = state ? await takePendingSignIn(db, state) : undefined;
    if (!state || !pending) {
      return messagePage(reply, 400, "Sign-in expired", "This sign-in was already used or has expired.", {
        href: "/",
        text: "Sign in again",
      });
    }
    let tokens: Awaited<ReturnType<typeof oidc.redeemCode>>;
    try {
      tokens = await oidc.redeemCode(url, { state, ...pending });
    } catch (error) {
      const reason =
        error instanceof ConsoleSignInError ? error.message : "the identity provider did not answer";
      request.log.warn({ err: error }, "console sign-in failed");
      return messagePage(reply, 400, "Sign-in failed", `Sign-in failed: ${reason}.`, {
        href: "/",
        text: "Try again",
      });
    }
    const id = randomToken();
    await createConsoleSession(db, id, {
      username: tokens.username ?? "unknown",
      csrfToken: randomToken(),
      accessToken: tokens.accessToken,
      accessExpiresAt: tokens.accessExpiresAt,
      refreshToken: tokens.refreshToken,
      idToken: tokens.idToken,
      expiresAt: Date.now() + SESSION_LIFETIME_MS,
    });
    return reply
      .setCookie(COOKIE, id, cookieOptions)
      .header("cache-control", "no-store")
      .redirect(pending.returnTo, 303);
  });

  app.get("/console/signed-out", async (_request, reply) =>
    messagePage(reply, 200, "Signed out", "You are signed out of the imaging-services console.", {
      href: "/",
      text: "Sign in again",
    }),
  );

  app.get("/console/session", async (request, reply) => {
    const active = await activeSession(request);
    if (!active) return sendGatewayProblem(reply, 401, "Not signed in to the console");
    const token = await platformTokenOrProblem(reply, active.session);
    if (token === undefined) return reply;
    const claims = decodeJwt(token);
    const roles = Array.isArray(claims.roles) ? claims.roles.map(String) : [];
    const info: ConsoleSessionInfo = {
      user: active.session.username,
      roles,
      applications: Array.isArray(claims.applications) ? claims.applications.map(String) : [],
      isAdmin: roles.includes("admin"),
      idp: options.idp,
      baseUrl,
      version: options.version,
      csrfToken: active.session.csrfToken,
    };
    return reply.header("cache-control", "no-store").send(info);
  });

  app.post("/console/sign-out", async (request, reply) => {
    const id = request.cookies[COOKIE];
    const session = id ? await findConsoleSession(db, id) : undefined;
    if (id && session) {
      const refused = csrfRefusal(request, session.csrfToken, baseUrl);
      if (refused) return sendGatewayProblem(reply, 403, refused);
      await deleteConsoleSession(db, id);
    }
    const location = await oidc.endSessionUrl(session?.idToken ?? null).catch(() => "/console/signed-out");
    return reply.clearCookie(COOKIE, cookieOptions).header("cache-control", "no-store").send({ location });
  });

  const platformTokenOrProblem = async (reply: FastifyReply, session: ConsoleSession) => {
    try {
      return await platformToken(session);
    } catch (error) {
      reply.log.warn({ err: error }, "console: token exchange failed");
      sendGatewayProblem(
        reply,
        503,
        "The identity provider cannot confirm your rights now: try again shortly",
      );
      return undefined;
    }
  };

  app.all("/console/api/*", async (request, reply) => {
    const active = await activeSession(request);
    if (!active) return sendGatewayProblem(reply, 401, "Not signed in to the console: reload the page");
    if (!isSafeMethod(request.method)) {
      const refused = csrfRefusal(request, active.session.csrfToken, baseUrl);
      if (refused) return sendGatewayProblem(reply, 403, refused);
    }
    const token = await platformTokenOrProblem(reply, active.session);
    if (token === undefined) return reply;
    const path = request.url.slice("/console/api".length);
    return reply.from(`/rest${path}`, {
      ...rawBodyOptions(request),
      rewriteRequestHeaders: (_request, headers) => {
        const { cookie: _c, [CSRF_HEADER]: _t, "x-api-key": _k, ...rest } = headers;
        return { ...rest, authorization: `Bearer ${token}` };
      },
      rewriteHeaders: (headers) => forwardableResponseHeaders(headers),
      onError: (errorReply) =>
        sendGatewayProblem(errorReply, 502, "The REST API cannot be reached: try again shortly"),
    });
  });
}
