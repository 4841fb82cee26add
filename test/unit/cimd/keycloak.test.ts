import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  fromKeycloakPolicy,
  fromKeycloakProfile,
  toKeycloakPolicy,
  toKeycloakProfile,
} from "../../../src/idp/cimd/keycloak.ts";
import type { CimdPolicy, CimdProfile } from "../../../src/idp/cimd/model.ts";
import { presetConfig } from "./fixtures.ts";

describe("Keycloak representation of profiles and policies", () => {
  const config = presetConfig("claude-code");
  const profile = config.profiles[0] as CimdProfile;
  const policy = config.policies[0] as CimdPolicy;

  it("writes Keycloak's configuration keys", () => {
    assert.deepEqual(toKeycloakProfile(profile).executors, [
      {
        executor: "client-id-metadata-document",
        configuration: {
          "cimd-allow-http-scheme": false,
          "cimd-allow-permitted-domains": ["claude.ai", "localhost", "127.0.0.1"],
          "cimd-restrict-same-domain": false,
          "only-allow-confidential-client": false,
        },
      },
    ]);
    const kc = toKeycloakPolicy(policy);
    assert.deepEqual(kc.conditions, [
      {
        condition: "client-id-uri",
        configuration: {
          "client-id-uri-scheme": ["https"],
          "client-id-uri-allow-permitted-domains": ["claude.ai"],
        },
      },
    ]);
    assert.deepEqual(kc.profiles, ["cimd-profile-claude-code"]);
    assert.equal(kc.enabled, true);
  });

  it("reads back what it writes", () => {
    assert.deepEqual(fromKeycloakProfile(toKeycloakProfile(profile)), profile);
    assert.deepEqual(fromKeycloakPolicy(toKeycloakPolicy(policy)), policy);
  });

  it("reads string booleans and lists held in strings", () => {
    const read = fromKeycloakProfile({
      name: "p",
      executors: [
        {
          executor: "client-id-metadata-document",
          configuration: {
            "cimd-allow-http-scheme": "true",
            "cimd-allow-permitted-domains": '["a.example","localhost"]',
            "cimd-restrict-same-domain": "false",
          },
        },
      ],
    });
    assert.equal(read?.allowHttpScheme, true);
    assert.equal(read?.onlyAllowConfidentialClient, false);
    assert.deepEqual(read?.trustedDomains, ["a.example", "localhost"]);
    assert.equal(
      fromKeycloakProfile({ name: "pkce", executors: [{ executor: "pkce-enforcer", configuration: {} }] }),
      undefined,
    );
    assert.equal(
      fromKeycloakPolicy({
        name: "x",
        enabled: true,
        conditions: [{ condition: "any-client", configuration: {} }],
        profiles: [],
      }),
      undefined,
    );
  });
});
