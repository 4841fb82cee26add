import type { RegistrationMode } from "../idp/registration/policy.ts";
import { type Check, type CheckDefinition, fail, pass } from "./check.ts";
import { describeAnswer, jsonObject, type Observation } from "./http.ts";
import type { IdpKind } from "./identity-provider.ts";

export const DYNAMIC_REGISTRATION: CheckDefinition = {
  id: "dynamic-client-registration",
  title: "Dynamic client registration: the issuer's metadata agrees with DYNAMIC_CLIENT_REGISTRATION",
};

interface RegistrationContext {
  idp: IdpKind;
  mode: RegistrationMode;
  /** The registration endpoint the identity provider has when registration is on (path compared). */
  expectedEndpoint: string;
}

const pathOf = (url: string) => URL.parse(url)?.pathname.replace(/\/$/, "") ?? url;

/**
 * The mode and what the issuer's discovery document says. The embedded provider advertises
 * `registration_endpoint` only when registration is on; Keycloak always does (its client
 * registration policies decide who may register), so with Keycloak only "on but not advertised" is
 * a disagreement. `register` is the gateway's answer to POST /register (307 to the endpoint when on).
 */
export function registrationCheck(
  context: RegistrationContext,
  idpDocument: Observation,
  register: Observation,
): Check {
  const document = jsonObject(idpDocument);
  if (!document) {
    return fail(
      DYNAMIC_REGISTRATION,
      `mode ${context.mode}; GET ${idpDocument.url}: ${describeAnswer(idpDocument)}, no discovery document`,
      "Run this command against the running gateway (see the identity provider check above).",
    );
  }
  const advertised =
    typeof document.registration_endpoint === "string" ? document.registration_endpoint : undefined;
  const restart =
    "Restart the gateway with the same DYNAMIC_CLIENT_REGISTRATION as this command sees (or point --config at its configuration).";
  // Named in the answer: which clients cannot sign in until registration is on.
  const registerOnly =
    "clients that only register (mcp-remote without --client-metadata-url, the Python MCP SDK without client_metadata_url, older MCP SDKs) cannot sign in: they need DYNAMIC_CLIENT_REGISTRATION=loopback";
  if (context.mode === "off") {
    if (advertised && context.idp === "embedded") {
      return fail(
        DYNAMIC_REGISTRATION,
        `mode off here, but the issuer advertises registration_endpoint ${advertised}`,
        restart,
      );
    }
    return pass(
      DYNAMIC_REGISTRATION,
      context.idp === "keycloak"
        ? `mode off: clients sign in with client ID metadata documents; Keycloak advertises its registration endpoint whatever the mode, its client registration policies decide; ${registerOnly}`
        : `mode off (default): no registration endpoint advertised; clients sign in with client ID metadata documents; ${registerOnly}`,
    );
  }
  if (!advertised) {
    return fail(
      DYNAMIC_REGISTRATION,
      `mode ${context.mode} here, but the issuer's metadata advertises no registration_endpoint`,
      restart,
    );
  }
  if (pathOf(advertised) !== pathOf(context.expectedEndpoint)) {
    return fail(
      DYNAMIC_REGISTRATION,
      `mode ${context.mode}; the issuer advertises registration_endpoint ${advertised}, expected ${context.expectedEndpoint}`,
      "Check IDP_ISSUER / KEYCLOAK_REALM: the metadata is not the identity provider's this configuration names.",
    );
  }
  const location = register.ok ? register.location : null;
  if (!register.ok || register.status !== 307 || !location || pathOf(location) !== pathOf(advertised)) {
    return fail(
      DYNAMIC_REGISTRATION,
      `mode ${context.mode}; registration_endpoint ${advertised}, but POST /register answered ${describeAnswer(register)} instead of a 307 there`,
      restart,
    );
  }
  return pass(
    DYNAMIC_REGISTRATION,
    `mode ${context.mode}: the issuer advertises registration_endpoint ${advertised}, /register leads there`,
  );
}
