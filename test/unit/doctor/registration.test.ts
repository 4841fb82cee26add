import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { registrationCheck } from "../../../src/doctor/registration.ts";
import { answered } from "./observations.ts";

const ISSUER = "http://localhost:8090/idp";

describe("doctor: dynamic client registration off", () => {
  for (const idp of ["embedded", "keycloak"] as const) {
    it(`${idp}: passes and names the clients that cannot sign in without registration`, () => {
      const check = registrationCheck(
        { idp, mode: "off", expectedEndpoint: `${ISSUER}/reg` },
        answered(`${ISSUER}/.well-known/openid-configuration`, 200, {
          issuer: ISSUER,
          ...(idp === "keycloak"
            ? { registration_endpoint: `${ISSUER}/clients-registrations/openid-connect` }
            : {}),
        }),
        answered("http://localhost:8090/register", 404, { error: "not_found" }),
      );
      assert.equal(check.verdict, "pass");
      // What mcp-remote answers then ("Incompatible auth server") does not say it; the doctor does.
      assert.match(check.detail, /mcp-remote without --client-metadata-url/);
      assert.match(check.detail, /Python MCP SDK without client_metadata_url/);
      assert.match(check.detail, /need DYNAMIC_CLIENT_REGISTRATION=loopback$/);
    });
  }
});
