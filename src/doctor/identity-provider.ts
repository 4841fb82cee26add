import { type Check, type CheckDefinition, fail, notRun, pass, warn } from "./check.ts";
import { describeAnswer, jsonObject, type Observation } from "./http.ts";

export type IdpKind = "embedded" | "keycloak";

export const IDP_CIMD: CheckDefinition = {
  id: "idp-cimd",
  title: "The identity provider advertises client ID metadata documents, public clients and S256 PKCE",
};

const unreachableFix = (idp: IdpKind) =>
  idp === "keycloak"
    ? "Make sure Keycloak runs and the gateway reaches it (KEYCLOAK_URL with its /auth path, KEYCLOAK_REALM), and run this command against the gateway."
    : "Run this command against the gateway (PUBLIC_URL or --url) with the gateway's IDP_REALM / IDP_ISSUER, and make sure the gateway runs its identity provider.";

const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

export function idpCimdCheck(idp: IdpKind, observation: Observation): Check {
  const where = `GET ${observation.url}`;
  const document = jsonObject(observation);
  if (!observation.ok || observation.status !== 200 || !document)
    return fail(
      IDP_CIMD,
      `${where}: ${describeAnswer(observation)}, no discovery document`,
      unreachableFix(idp),
    );
  const problems: string[] = [];
  if (document.client_id_metadata_document_supported !== true)
    problems.push("client_id_metadata_document_supported is not true");
  if (!list(document.token_endpoint_auth_methods_supported).includes("none"))
    problems.push("'none' is missing from token_endpoint_auth_methods_supported (public clients)");
  if (!list(document.code_challenge_methods_supported).includes("S256"))
    problems.push("S256 is missing from code_challenge_methods_supported");
  if (problems.length > 0)
    return fail(
      IDP_CIMD,
      `${where}: ${problems.join("; ")}`,
      idp === "keycloak"
        ? "Start Keycloak with --features=cimd (26.7 or newer: older versions do not advertise 'none' and AI clients fall back to dynamic registration)."
        : "Restart the gateway with its embedded identity provider (IDP=embedded, IDP_ISSUER unset), which advertises all three.",
    );
  return pass(
    IDP_CIMD,
    `${where}: client_id_metadata_document_supported true, token endpoint auth 'none', PKCE S256`,
  );
}

/** Discovery URLs are absolute at base_url; when doctor probes another address (--url), go there instead. */
export function rebase(url: string, expectedBase: string, probeBase: string): string {
  return url === expectedBase || url.startsWith(`${expectedBase}/`)
    ? `${probeBase}${url.slice(expectedBase.length)}`
    : url;
}

const TOKEN_EXCHANGE: CheckDefinition = {
  id: "token-exchange",
  title: "The confidential client mcp-token-exchange can exchange tokens",
};

type ExchangeOutcome =
  | "may-exchange"
  | "bad-credentials"
  | "not-enabled"
  | "accepted-bogus-token"
  | "unexpected"
  | "unreachable";

/**
 * What the token endpoint's answer to an exchange of a deliberately invalid subject token says about the
 * client. Observed: the embedded provider answers 400 invalid_grant "subject_token refused: ..." and
 * 401 invalid_client for a wrong secret; Keycloak 26.7 answers 400 invalid_request "Invalid token",
 * 401 unauthorized_client "Invalid client or Invalid client credentials" for a wrong secret (401
 * invalid_client for an unknown client), and 400 invalid_request "Standard token exchange is not
 * enabled for the requested client".
 */
export function classifyExchangeAnswer(observation: Observation): ExchangeOutcome {
  if (!observation.ok) return "unreachable";
  const body = jsonObject(observation) ?? {};
  const error = typeof body.error === "string" ? body.error : "";
  const description = typeof body.error_description === "string" ? body.error_description : "";
  if (observation.status === 200 && typeof body.access_token === "string") return "accepted-bogus-token";
  if (observation.status === 401 || error === "invalid_client") return "bad-credentials";
  if (
    error === "unsupported_grant_type" ||
    error === "unauthorized_client" ||
    /not (enabled|allowed|permitted)/i.test(description)
  )
    return "not-enabled";
  if (["invalid_grant", "invalid_token", "invalid_request"].includes(error) && /token/i.test(description))
    return "may-exchange";
  return "unexpected";
}

interface ExchangeContext {
  idp: IdpKind;
  clientId: string;
  realm: string;
  /** Where the secret came from (never the secret). */
  secretSource: string;
}

function answerText(observation: Observation): string {
  if (!observation.ok) return describeAnswer(observation);
  const body = jsonObject(observation) ?? {};
  const error = typeof body.error === "string" ? ` ${body.error}` : "";
  const description =
    typeof body.error_description === "string" ? ` "${body.error_description.slice(0, 200)}"` : "";
  return `${observation.status}${error}${description}`;
}

export function tokenExchangeCheck(context: ExchangeContext, observation: Observation): Check {
  const where = `POST ${observation.url} as ${context.clientId} (client_secret_basic, secret from ${context.secretSource}) with an invalid subject token`;
  const answer = `${where}: ${answerText(observation)}`;
  const keycloak = context.idp === "keycloak";
  switch (classifyExchangeAnswer(observation)) {
    case "may-exchange":
      return pass(TOKEN_EXCHANGE, `${answer}: the client authenticated and may exchange`);
    case "bad-credentials":
      return fail(
        TOKEN_EXCHANGE,
        `${answer}: the identity provider refused the client's credentials`,
        keycloak
          ? `Check that TOKEN_EXCHANGE_CLIENT_ID names the client provisioned in Keycloak realm ${context.realm} and restart the gateway, which then reads that client's current secret from Keycloak.`
          : `Give the gateway and this command the identity provider's secret for ${context.clientId}: leave TOKEN_EXCHANGE_CLIENT_SECRET unset so all read the store's (same store and IMAGING_SECRETS_KEY), or set it to the same value everywhere, then restart the gateway.`,
      );
    case "not-enabled":
      return fail(
        TOKEN_EXCHANGE,
        `${answer}: token exchange is not enabled for ${context.clientId}`,
        keycloak
          ? `In Keycloak realm ${context.realm}, turn on "Standard token exchange" for client ${context.clientId} (Clients > ${context.clientId} > Settings, attribute standard.token.exchange.enabled), or restart the gateway to provision it again.`
          : `Set TOKEN_EXCHANGE_CLIENT_ID to the identity provider's exchange client (mcp-token-exchange by default), the same for the gateway and this command.`,
      );
    case "accepted-bogus-token":
      return fail(
        TOKEN_EXCHANGE,
        `${where}: 200, a token was issued for an invalid subject token`,
        "Make sure the token endpoint is the identity provider's own, not a stand-in that accepts any token.",
      );
    case "unreachable":
      return fail(TOKEN_EXCHANGE, answer, unreachableFix(context.idp));
    case "unexpected":
      return warn(
        TOKEN_EXCHANGE,
        `${answer}: not an answer doctor knows how to read`,
        `Look at the identity provider's log for the token exchange request of ${context.clientId}.`,
      );
  }
}

export function tokenExchangeNotRun(reason: string, fix: string): Check {
  return notRun(TOKEN_EXCHANGE, reason, fix);
}

export function tokenExchangeNoSecret(context: Omit<ExchangeContext, "secretSource">, reason: string): Check {
  return fail(
    TOKEN_EXCHANGE,
    `no secret for ${context.clientId}: ${reason}`,
    context.idp === "keycloak"
      ? `Restart the gateway: it provisions ${context.clientId} in Keycloak realm ${context.realm} at start-up.`
      : `Start the gateway once (its identity provider writes the secret into the store), or set TOKEN_EXCHANGE_CLIENT_SECRET, and give this command the gateway's --data-dir (or DATABASE_URL) and secrets key.`,
  );
}
