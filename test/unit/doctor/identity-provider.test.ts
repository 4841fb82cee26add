import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  classifyExchangeAnswer,
  idpCimdCheck,
  rebase,
  tokenExchangeCheck,
} from "../../../src/doctor/identity-provider.ts";
import { answered, unanswered } from "./observations.ts";

const ISSUER = "http://gw.example.com:8090/auth/realms/imaging";
const DISCOVERY = `${ISSUER}/.well-known/openid-configuration`;
const TOKEN = `${ISSUER}/protocol/openid-connect/token`;

describe("idp-cimd: the identity provider advertises CIMD", () => {
  const document = (overrides: Record<string, unknown> = {}) => ({
    issuer: ISSUER,
    client_id_metadata_document_supported: true,
    token_endpoint_auth_methods_supported: ["client_secret_basic", "none"],
    code_challenge_methods_supported: ["plain", "S256"],
    ...overrides,
  });
  it("passes with the flag, 'none' and S256", () => {
    assert.equal(idpCimdCheck("keycloak", answered(DISCOVERY, 200, document())).verdict, "pass");
  });

  it("fails for a Keycloak without the cimd feature, with the fix to start it so", () => {
    const check = idpCimdCheck(
      "keycloak",
      answered(DISCOVERY, 200, document({ client_id_metadata_document_supported: undefined })),
    );
    assert.equal(check.verdict, "fail");
    assert.match(check.detail, /client_id_metadata_document_supported is not true/);
    assert.match(check.fix ?? "", /^Start Keycloak with --features=cimd \(26\.7 or newer/);
  });

  it("fails for a Keycloak older than 26.7: no 'none' among the token endpoint auth methods", () => {
    const check = idpCimdCheck(
      "keycloak",
      answered(DISCOVERY, 200, document({ token_endpoint_auth_methods_supported: ["client_secret_basic"] })),
    );
    assert.equal(check.verdict, "fail");
    assert.match(check.detail, /'none' is missing/);
  });

  it("fails without S256, and without a document", () => {
    assert.equal(
      idpCimdCheck(
        "embedded",
        answered(DISCOVERY, 200, document({ code_challenge_methods_supported: ["plain"] })),
      ).verdict,
      "fail",
    );
    assert.equal(idpCimdCheck("embedded", answered(DISCOVERY, 404, { error: "not_found" })).verdict, "fail");
    assert.equal(idpCimdCheck("embedded", unanswered(DISCOVERY)).verdict, "fail");
  });
});

describe("rebase: probing another address than base_url", () => {
  it("moves URLs under base_url to the probed address, leaves others", () => {
    assert.equal(
      rebase(TOKEN, "http://gw.example.com:8090", "http://127.0.0.1:8090"),
      "http://127.0.0.1:8090/auth/realms/imaging/protocol/openid-connect/token",
    );
    assert.equal(
      rebase("https://idp.example.com/token", "http://gw.example.com:8090", "http://x"),
      "https://idp.example.com/token",
    );
    assert.equal(
      rebase("http://gw.example.com:80901/x", "http://gw.example.com:8090", "http://x"),
      "http://gw.example.com:80901/x",
    );
  });
});

describe("token-exchange: the answers of both identity providers to an invalid subject token", () => {
  const answer = (status: number, body: Record<string, unknown>) =>
    answered(TOKEN, status, body, { method: "POST" });
  const context = {
    clientId: "mcp-token-exchange",
    realm: "imaging",
    secretSource: "TOKEN_EXCHANGE_CLIENT_SECRET",
  };

  it("reads the embedded provider's answers", () => {
    assert.equal(
      classifyExchangeAnswer(
        answer(400, {
          error: "invalid_grant",
          error_description:
            "subject_token refused: it is not a valid access token of this identity provider",
        }),
      ),
      "may-exchange",
    );
    assert.equal(
      classifyExchangeAnswer(
        answer(401, { error: "invalid_client", error_description: "client authentication failed" }),
      ),
      "bad-credentials",
    );
    assert.equal(
      classifyExchangeAnswer(
        answer(400, {
          error: "unauthorized_client",
          error_description: "requested grant type is not allowed for this client",
        }),
      ),
      "not-enabled",
    );
  });

  it("reads Keycloak's answers (26.7)", () => {
    assert.equal(
      classifyExchangeAnswer(answer(400, { error: "invalid_request", error_description: "Invalid token" })),
      "may-exchange",
    );
    // A wrong secret: 401 unauthorized_client, not invalid_client.
    assert.equal(
      classifyExchangeAnswer(
        answer(401, {
          error: "unauthorized_client",
          error_description: "Invalid client or Invalid client credentials",
        }),
      ),
      "bad-credentials",
    );
    assert.equal(
      classifyExchangeAnswer(
        answer(400, {
          error: "invalid_request",
          error_description: "Standard token exchange is not enabled for the requested client",
        }),
      ),
      "not-enabled",
    );
  });

  it("flags a token issued for a bogus subject token, an unknown answer and no answer", () => {
    assert.equal(classifyExchangeAnswer(answer(200, { access_token: "x" })), "accepted-bogus-token");
    assert.equal(classifyExchangeAnswer(answer(500, { error: "server_error" })), "unexpected");
    assert.equal(classifyExchangeAnswer(unanswered(TOKEN, "ECONNREFUSED", "POST")), "unreachable");
  });

  it("gives the Keycloak fix for standard token exchange turned off", () => {
    const check = tokenExchangeCheck(
      { ...context, idp: "keycloak" },
      answer(400, {
        error: "invalid_request",
        error_description: "Standard token exchange is not enabled for the requested client",
      }),
    );
    assert.equal(check.verdict, "fail");
    assert.match(check.fix ?? "", /turn on "Standard token exchange" for client mcp-token-exchange/);
    assert.match(check.fix ?? "", /standard\.token\.exchange\.enabled/);
  });

  it("passes naming where the secret came from, never the secret", () => {
    const check = tokenExchangeCheck(
      { ...context, idp: "embedded" },
      answer(400, { error: "invalid_grant", error_description: "subject_token refused: it has expired" }),
    );
    assert.equal(check.verdict, "pass");
    assert.match(check.detail, /secret from TOKEN_EXCHANGE_CLIENT_SECRET/);
    assert.match(check.detail, /the client authenticated and may exchange$/);
  });

  it("fails a wrong secret with the fix for the embedded provider", () => {
    const check = tokenExchangeCheck(
      { ...context, idp: "embedded" },
      answer(401, { error: "invalid_client", error_description: "client authentication failed" }),
    );
    assert.equal(check.verdict, "fail");
    // The embedded provider keeps the secret sealed in the store (issue 16): the fix says how every process reads it.
    assert.match(check.fix ?? "", /leave TOKEN_EXCHANGE_CLIENT_SECRET unset so all read the store's/);
    assert.match(check.fix ?? "", /same store and IMAGING_SECRETS_KEY/);
  });
});
