import type { Kysely } from "kysely";
import type { Interaction, InteractionResults, KoaContextWithOIDC, Provider } from "oidc-provider";
import { verifyCredentials } from "../../domain/users.ts";
import { signIns } from "../../observability/metrics.ts";
import type { Database } from "../../store/schema.ts";
import { findUserById } from "../../store/users.ts";
import { SCOPE_DESCRIPTIONS } from "../scope-descriptions.ts";
import { isUrlClientId } from "./cimd-clients.ts";
import { CSRF_COOKIE, crossSiteProblem, csrfToken, csrfTokenValid, newCsrfCookieValue } from "./csrf.ts";
import type { SignInThrottle } from "./throttle.ts";
import { consentView, errorView, loginView, PAGE_HEADERS } from "./views.ts";

interface InteractionOptions {
  db: Kysely<Database>;
  /** Path of the issuer (where the provider is mounted), e.g. /auth/realms/imaging. */
  issuerPath: string;
  /** Origin of base_url: forms must be posted from it. */
  ownOrigin: string;
  secureCookies: boolean;
  /** HMAC key of the CSRF tokens. */
  csrfKey: string;
  throttle: SignInThrottle;
}

const FORM_LIMIT = 16 * 1024;
const INTERACTION_PATH = /^\/interaction\/([A-Za-z0-9_-]{1,128})(?:\/(login|confirm|abort))?$/;

class PageError extends Error {
  readonly status: number;
  readonly title: string;
  constructor(status: number, title: string, message: string) {
    super(message);
    this.status = status;
    this.title = title;
  }
}

async function readForm(ctx: KoaContextWithOIDC): Promise<URLSearchParams> {
  const type = (ctx.get("content-type") || "").split(";")[0]?.trim().toLowerCase();
  if (type !== "application/x-www-form-urlencoded") {
    throw new PageError(
      415,
      "Unsupported request",
      "The form must be sent as application/x-www-form-urlencoded.",
    );
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req) {
    size += (chunk as Buffer).length;
    if (size > FORM_LIMIT) throw new PageError(413, "Request too large", "The form is too large.");
    chunks.push(chunk as Buffer);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
}

/** What the consent prompt's details hold (oidc-provider's consent checks; its typings say only "object"). */
interface ConsentDetails {
  missingOIDCScope?: string[];
  missingOIDCClaims?: string[];
  missingResourceScopes?: Record<string, string[]>;
}

/**
 * The interaction pages oidc-provider sends the browser to (`interactions.url`): sign-in with a
 * platform account, then consent. GET renders the page of the pending prompt; POST .../login,
 * .../confirm and .../abort resolve it and send the browser back to the authorization endpoint.
 * Every form carries a CSRF token; sign-in failures are throttled per account and per address.
 */
export function interactionRoutes(provider: Provider, options: InteractionOptions) {
  const base = `${options.issuerPath}/interaction`;

  const html = (ctx: KoaContextWithOIDC, status: number, body: string) => {
    for (const [name, value] of Object.entries(PAGE_HEADERS)) ctx.set(name, value);
    ctx.status = status;
    ctx.type = "text/html; charset=utf-8";
    ctx.body = body;
  };

  const csrfCookie = (ctx: KoaContextWithOIDC): string => {
    let value = ctx.cookies.get(CSRF_COOKIE);
    if (!value || !/^[A-Za-z0-9_-]{43}$/.test(value)) {
      value = newCsrfCookieValue();
      ctx.cookies.set(CSRF_COOKIE, value, {
        httpOnly: true,
        sameSite: "lax",
        secure: options.secureCookies,
        path: base,
        signed: false,
        overwrite: true,
      });
    }
    return value;
  };

  const details = async (ctx: KoaContextWithOIDC, uid: string): Promise<Interaction> => {
    let interaction: Interaction;
    try {
      interaction = await provider.interactionDetails(ctx.req, ctx.res);
    } catch {
      throw new PageError(
        400,
        "Sign-in expired",
        "This sign-in page has expired or was opened in another browser. Go back to your application and start signing in again.",
      );
    }
    if (interaction.uid !== uid) {
      throw new PageError(
        400,
        "Sign-in expired",
        "This sign-in page does not belong to your current sign-in. Start again from your application.",
      );
    }
    return interaction;
  };

  const clientOf = async (interaction: Interaction) => {
    const clientId = String(interaction.params.client_id ?? "");
    const client = await provider.Client.find(clientId).catch(() => undefined);
    return {
      id: clientId,
      name: client?.clientName ?? clientId,
      metadataDocument: isUrlClientId(clientId),
      // Dynamically registered: its name is whatever the registration said, nobody vouches for it.
      registered: client?.metadata().client_id_issued_at !== undefined,
    };
  };

  const renderLogin = async (
    ctx: KoaContextWithOIDC,
    interaction: Interaction,
    status: number,
    extra: { error?: string; username?: string } = {},
  ) => {
    const client = await clientOf(interaction);
    const hint = interaction.prompt.details.login_hint;
    html(
      ctx,
      status,
      loginView({
        action: `${base}/${interaction.uid}/login`,
        csrf: csrfToken(options.csrfKey, csrfCookie(ctx), interaction.uid),
        clientName: client.name,
        username: extra.username ?? (typeof hint === "string" ? hint : undefined),
        error: extra.error,
      }),
    );
  };

  const renderConsent = async (ctx: KoaContextWithOIDC, interaction: Interaction) => {
    const client = await clientOf(interaction);
    const accountId = interaction.session?.accountId;
    const user = accountId ? await findUserById(options.db, accountId) : undefined;
    const redirect = URL.parse(String(interaction.params.redirect_uri ?? ""));
    const requested = String(interaction.params.scope ?? "")
      .split(" ")
      .filter(Boolean);
    const resources = Object.keys(interaction.prompt.details.missingResourceScopes ?? {});
    html(
      ctx,
      200,
      consentView({
        action: `${base}/${interaction.uid}/confirm`,
        abortAction: `${base}/${interaction.uid}/abort`,
        csrf: csrfToken(options.csrfKey, csrfCookie(ctx), interaction.uid),
        username: user?.username ?? accountId ?? "",
        client: { ...client, redirectHost: redirect ? redirect.host : "(unknown)" },
        scopes: requested.map((name) => ({ name, description: SCOPE_DESCRIPTIONS[name] ?? name })),
        resources,
      }),
    );
  };

  /** Refuses posts from elsewhere and posts without this browser's token for this interaction. */
  const checkForm = (ctx: KoaContextWithOIDC, form: URLSearchParams, uid: string): string | undefined => {
    const crossSite = crossSiteProblem(
      { origin: ctx.get("origin") || undefined, secFetchSite: ctx.get("sec-fetch-site") || undefined },
      options.ownOrigin,
    );
    if (crossSite) return `The request was refused: ${crossSite}.`;
    if (!csrfTokenValid(options.csrfKey, ctx.cookies.get(CSRF_COOKIE), uid, form.get("csrf") ?? undefined)) {
      return "The request was refused: the form's security token is missing or does not match this browser. Reload the page and try again.";
    }
    return undefined;
  };

  const resume = async (ctx: KoaContextWithOIDC, result: InteractionResults, merge: boolean) => {
    const returnTo = await provider.interactionResult(ctx.req, ctx.res, result, {
      mergeWithLastSubmission: merge,
    });
    for (const [name, value] of Object.entries(PAGE_HEADERS)) ctx.set(name, value);
    ctx.status = 303;
    ctx.set("location", returnTo);
    ctx.body = "";
  };

  const login = async (ctx: KoaContextWithOIDC, interaction: Interaction, form: URLSearchParams) => {
    if (interaction.prompt.name !== "login") return renderConsent(ctx, interaction);
    const username = (form.get("username") ?? "").trim();
    const password = form.get("password") ?? "";
    if (username === "" || password === "") {
      return renderLogin(ctx, interaction, 400, {
        username,
        error: "Enter your user name and your password.",
      });
    }
    const verdict = await options.throttle.check(username, ctx.ip);
    if (!verdict.allowed) {
      signIns.inc({ result: "throttled" });
      ctx.set("retry-after", String(verdict.retryAfterSeconds));
      const who = verdict.scope === "account" ? "for this account" : "from your network address";
      return renderLogin(ctx, interaction, 429, {
        username,
        error: `Too many failed sign-in attempts ${who}. Wait ${verdict.retryAfterSeconds} seconds, then try again.`,
      });
    }
    const user = await verifyCredentials(options.db, username, password);
    if (!user) {
      await options.throttle.failure(username, ctx.ip);
      signIns.inc({ result: "failure" });
      return renderLogin(ctx, interaction, 401, {
        username,
        error: "Incorrect user name or password (or the account is disabled).",
      });
    }
    await options.throttle.success(username);
    signIns.inc({ result: "success" });
    return resume(ctx, { login: { accountId: user.id, remember: true, amr: ["pwd"] } }, false);
  };

  const confirm = async (ctx: KoaContextWithOIDC, interaction: Interaction) => {
    if (interaction.prompt.name !== "consent") return renderLogin(ctx, interaction, 200);
    const accountId = interaction.session?.accountId;
    if (!accountId)
      throw new PageError(
        400,
        "Sign-in expired",
        "You are not signed in any more. Start again from your application.",
      );
    const prompt = interaction.prompt.details as ConsentDetails;
    const grant = interaction.grantId
      ? ((await provider.Grant.find(interaction.grantId)) ??
        new provider.Grant({ accountId, clientId: String(interaction.params.client_id) }))
      : new provider.Grant({ accountId, clientId: String(interaction.params.client_id) });
    if (prompt.missingOIDCScope) grant.addOIDCScope(prompt.missingOIDCScope.join(" "));
    if (prompt.missingOIDCClaims) grant.addOIDCClaims(prompt.missingOIDCClaims);
    for (const [indicator, scopes] of Object.entries(prompt.missingResourceScopes ?? {})) {
      grant.addResourceScope(indicator, scopes.join(" "));
    }
    const grantId = await grant.save();
    return resume(ctx, { consent: { grantId } }, true);
  };

  return async function interactionMiddleware(
    ctx: KoaContextWithOIDC,
    next: () => Promise<void>,
  ): Promise<void> {
    const match = INTERACTION_PATH.exec(ctx.path);
    if (!match) return next();
    const [, uid = "", action] = match;
    try {
      if (ctx.method === "GET" && !action) {
        const interaction = await details(ctx, uid);
        if (interaction.prompt.name === "login") return await renderLogin(ctx, interaction, 200);
        if (interaction.prompt.name === "consent") return await renderConsent(ctx, interaction);
        throw new PageError(
          501,
          "Unsupported step",
          `The sign-in step ${interaction.prompt.name} is not supported.`,
        );
      }
      if (ctx.method !== "POST" || !action) {
        ctx.set("allow", action ? "POST" : "GET");
        throw new PageError(405, "Not allowed", `${ctx.method} is not allowed here.`);
      }
      const form = await readForm(ctx);
      const interaction = await details(ctx, uid);
      const refused = checkForm(ctx, form, uid);
      if (refused) {
        if (interaction.prompt.name === "login") {
          return await renderLogin(ctx, interaction, 403, {
            error: refused,
            username: form.get("username") ?? undefined,
          });
        }
        throw new PageError(403, "Request refused", refused);
      }
      if (action === "login") return await login(ctx, interaction, form);
      if (action === "confirm") return await confirm(ctx, interaction);
      return await resume(
        ctx,
        { error: "access_denied", error_description: "The user denied access" },
        false,
      );
    } catch (error) {
      if (error instanceof PageError) return html(ctx, error.status, errorView(error.title, error.message));
      throw error;
    }
  };
}
