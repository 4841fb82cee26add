import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CimdFetchError } from "../../../src/idp/cimd/fetcher.ts";
import type { CimdConfig } from "../../../src/idp/cimd/model.ts";
import { type CimdResolution, resolveCimdClient } from "../../../src/idp/cimd/resolve.ts";
import {
  CLAUDE_CODE_ID,
  claudeCodeDocument,
  fakeFetcher,
  presetConfig,
  VSCODE_ID,
  vscodeDocument,
} from "./fixtures.ts";

const DEV_ID = "http://dev.example.test/oauth/client.json";

function refused(result: CimdResolution, error: "invalid_client" | "invalid_request", rule: string): string {
  assert.equal(result.ok, false, `expected a refusal by ${rule}`);
  if (result.ok) throw new Error("unreachable");
  assert.equal(result.error, error, result.description);
  assert.equal(result.rule, rule, result.description);
  return result.description;
}

/** The HTTP variant for a development client at dev.example.test. */
function devConfig(http: { profile: boolean; policy: boolean }): CimdConfig {
  return {
    profiles: [
      {
        name: "cimd-profile-dev",
        executor: "client-id-metadata-document",
        allowHttpScheme: http.profile,
        restrictSameDomain: false,
        onlyAllowConfidentialClient: false,
        trustedDomains: ["dev.example.test", "localhost", "127.0.0.1"],
      },
    ],
    policies: [
      {
        name: "cimd-policy-dev",
        condition: "client-id-uri",
        uriSchemes: http.policy ? ["https", "http"] : ["https"],
        trustedDomains: ["dev.example.test"],
        profiles: ["cimd-profile-dev"],
        enabled: true,
      },
    ],
  };
}

const devDocument = () => ({
  client_id: DEV_ID,
  client_name: "Dev client",
  redirect_uris: ["http://dev.example.test/callback", "http://localhost/callback"],
});

describe("resolveCimdClient: accepted clients", () => {
  it("accepts Claude Code with the claude-code preset, its loopback callback on any port", async () => {
    const fetcher = fakeFetcher({ [CLAUDE_CODE_ID]: claudeCodeDocument() });
    const result = await resolveCimdClient(CLAUDE_CODE_ID, {
      config: presetConfig("claude-code", "vscode"),
      fetcher,
      redirectUri: "http://localhost:53682/callback",
    });
    assert.ok(result.ok, !result.ok ? result.description : "");
    assert.equal(result.policy, "cimd-policy-claude-code");
    assert.equal(result.profile, "cimd-profile-claude-code");
    assert.equal(result.metadata.client_id, CLAUDE_CODE_ID);
    assert.equal(result.metadata.client_name, "Claude Code");
    assert.deepEqual(fetcher.calls, [{ url: CLAUDE_CODE_ID, allowSpecialAddresses: true }]);
  });

  it("accepts VS Code with the vscode preset (logo on code.visualstudio.com) and both its redirect URIs", async () => {
    const fetcher = fakeFetcher({ [VSCODE_ID]: vscodeDocument() });
    for (const redirectUri of [
      "http://127.0.0.1:33418/",
      "https://vscode.dev/redirect",
      "http://127.0.0.1:40001/",
    ]) {
      const result = await resolveCimdClient(VSCODE_ID, {
        config: presetConfig("vscode"),
        fetcher,
        redirectUri,
      });
      assert.ok(result.ok, !result.ok ? result.description : "");
      assert.equal(result.policy, "cimd-policy-vscode");
    }
  });

  it("reads a missing token_endpoint_auth_method as none (a public client)", async () => {
    const document = claudeCodeDocument() as Record<string, unknown>;
    delete document.token_endpoint_auth_method;
    const result = await resolveCimdClient(CLAUDE_CODE_ID, {
      config: presetConfig("claude-code"),
      fetcher: fakeFetcher({ [CLAUDE_CODE_ID]: document }),
    });
    assert.ok(result.ok);
    assert.equal(result.metadata.token_endpoint_auth_method, "none");
  });

  it("accepts an http client_id with the HTTP variant (Allow http scheme ON, URI schemes https, http)", async () => {
    const result = await resolveCimdClient(DEV_ID, {
      config: devConfig({ profile: true, policy: true }),
      fetcher: fakeFetcher({ [DEV_ID]: devDocument() }),
      redirectUri: "http://dev.example.test/callback",
    });
    assert.ok(result.ok, !result.ok ? result.description : "");
  });

  it("lets the fetch reach special addresses only when the policy lists the host itself", async () => {
    const config = presetConfig("claude-code");
    const fetcher = fakeFetcher({ [CLAUDE_CODE_ID]: claudeCodeDocument() });
    await resolveCimdClient(CLAUDE_CODE_ID, { config, fetcher });
    (config.policies[0] as { trustedDomains: string[] }).trustedDomains = ["*.claude.ai"];
    await resolveCimdClient(CLAUDE_CODE_ID, { config, fetcher });
    assert.deepEqual(
      fetcher.calls.map((c) => c.allowSpecialAddresses),
      [true, false],
    );
  });
});

describe("resolveCimdClient: the policy/profile mistakes of the Errors table", () => {
  it("profile not linked: Policy exists but CIMD is ignored, nothing fetched", async () => {
    const config = presetConfig("claude-code");
    (config.policies[0] as { profiles: string[] }).profiles = [];
    const fetcher = fakeFetcher({ [CLAUDE_CODE_ID]: claudeCodeDocument() });
    const description = refused(
      await resolveCimdClient(CLAUDE_CODE_ID, { config, fetcher }),
      "invalid_client",
      "policy-not-linked",
    );
    assert.match(description, /^Policy exists but CIMD is ignored: client policy cimd-policy-claude-code/);
    assert.match(description, /imaging cimd link claude-code/);
    assert.equal(fetcher.calls.length, 0);
  });

  it("client domain missing from the profile's trusted domains: refused before any fetch", async () => {
    const config = presetConfig("claude-code");
    (config.profiles[0] as { trustedDomains: string[] }).trustedDomains = ["localhost", "127.0.0.1"];
    const fetcher = fakeFetcher({ [CLAUDE_CODE_ID]: claudeCodeDocument() });
    const description = refused(
      await resolveCimdClient(CLAUDE_CODE_ID, { config, fetcher }),
      "invalid_request",
      "profile-trusted-domain",
    );
    assert.match(
      description,
      /claude\.ai is not in the trusted domains of client profile cimd-profile-claude-code/,
    );
    assert.equal(fetcher.calls.length, 0);
  });

  it("client domain missing from the policy's trusted domains: no policy applies", async () => {
    const config = presetConfig("claude-code");
    (config.policies[0] as { trustedDomains: string[] }).trustedDomains = ["localhost"];
    const description = refused(
      await resolveCimdClient(CLAUDE_CODE_ID, { config, fetcher: fakeFetcher({}) }),
      "invalid_client",
      "policy-match",
    );
    assert.match(
      description,
      /host claude\.ai is not in the trusted domains of any enabled client-id-uri policy/,
    );
  });

  it("the profile's list does not stand in for the policy's (the two lists are not interchangeable)", async () => {
    const config = presetConfig("claude-code");
    (config.policies[0] as { trustedDomains: string[] }).trustedDomains = ["localhost", "127.0.0.1"];
    refused(
      await resolveCimdClient(CLAUDE_CODE_ID, { config, fetcher: fakeFetcher({}) }),
      "invalid_client",
      "policy-match",
    );
  });

  it("http client_id with Allow http scheme OFF in the profile is refused", async () => {
    const description = refused(
      await resolveCimdClient(DEV_ID, {
        config: devConfig({ profile: false, policy: true }),
        fetcher: fakeFetcher({ [DEV_ID]: devDocument() }),
      }),
      "invalid_request",
      "client-id-scheme",
    );
    assert.match(description, /Allow http scheme is OFF \(profile cimd-profile-dev\)/);
  });

  it("http client_id when the policy's URI schemes lack http: no policy applies", async () => {
    const description = refused(
      await resolveCimdClient(DEV_ID, {
        config: devConfig({ profile: true, policy: false }),
        fetcher: fakeFetcher({ [DEV_ID]: devDocument() }),
      }),
      "invalid_client",
      "policy-uri-scheme",
    );
    assert.match(description, /the HTTP variant needs URI schemes https, http and Allow http scheme ON/);
  });

  it("a disabled policy is named", async () => {
    const config = presetConfig("claude-code");
    (config.policies[0] as { enabled: boolean }).enabled = false;
    refused(
      await resolveCimdClient(CLAUDE_CODE_ID, { config, fetcher: fakeFetcher({}) }),
      "invalid_client",
      "policy-disabled",
    );
  });

  it("a policy naming a profile that does not exist is refused", async () => {
    const config = presetConfig("claude-code");
    (config.policies[0] as { profiles: string[] }).profiles = ["cimd-profile-gone"];
    const description = refused(
      await resolveCimdClient(CLAUDE_CODE_ID, { config, fetcher: fakeFetcher({}) }),
      "invalid_client",
      "policy-unknown-profile",
    );
    assert.match(description, /cimd-profile-gone, which does not exist/);
  });

  it("a profile with no trusted domains refuses every client", async () => {
    const config = presetConfig("claude-code");
    (config.profiles[0] as { trustedDomains: string[] }).trustedDomains = [];
    const description = refused(
      await resolveCimdClient(CLAUDE_CODE_ID, { config, fetcher: fakeFetcher({}) }),
      "invalid_request",
      "profile-trusted-domain",
    );
    assert.match(description, /no trusted domains/);
  });

  it("a policy with no trusted domains never matches", async () => {
    const config = presetConfig("claude-code");
    (config.policies[0] as { trustedDomains: string[] }).trustedDomains = [];
    refused(
      await resolveCimdClient(CLAUDE_CODE_ID, { config, fetcher: fakeFetcher({}) }),
      "invalid_client",
      "policy-match",
    );
  });

  it("re-reads the configuration on every call: a policy change applies at once, cache or not", async () => {
    const config = presetConfig("claude-code");
    let reads = 0;
    const context = {
      config: async () => {
        reads++;
        return config;
      },
      fetcher: fakeFetcher({ [CLAUDE_CODE_ID]: claudeCodeDocument() }),
    };
    assert.ok((await resolveCimdClient(CLAUDE_CODE_ID, context)).ok);
    (config.policies[0] as { profiles: string[] }).profiles = [];
    refused(await resolveCimdClient(CLAUDE_CODE_ID, context), "invalid_client", "policy-not-linked");
    (config.policies[0] as { profiles: string[] }).profiles = ["cimd-profile-claude-code"];
    (config.profiles[0] as { trustedDomains: string[] }).trustedDomains = ["claude.ai", "127.0.0.1"];
    refused(
      await resolveCimdClient(CLAUDE_CODE_ID, { ...context, redirectUri: "http://localhost:5000/callback" }),
      "invalid_request",
      "redirect-uri-domain",
    );
    assert.equal(reads, 3);
  });

  it("an unrelated client_id is unknown", async () => {
    refused(
      await resolveCimdClient("https://evil.example/oauth/client.json", {
        config: presetConfig("claude-code", "vscode"),
        fetcher: fakeFetcher({}),
      }),
      "invalid_client",
      "policy-match",
    );
  });

  it("reports a fetch failure as Client metadata fetch failed, naming the fetch rule", async () => {
    const description = refused(
      await resolveCimdClient(CLAUDE_CODE_ID, {
        config: presetConfig("claude-code"),
        fetcher: {
          fetchDocument: async () => {
            throw new CimdFetchError("fetch-size", "the document is larger than 5000 bytes");
          },
        },
      }),
      "invalid_request",
      "fetch-size",
    );
    assert.equal(description, "Client metadata fetch failed: the document is larger than 5000 bytes");
  });
});

describe("resolveCimdClient: client_id rules (checked before any fetch)", () => {
  const cases: [string, string, string][] = [
    ["not a URL", "claude.ai/oauth/claude-code-client-metadata", "client-id-url"],
    ["https required", "http://claude.ai/oauth/claude-code-client-metadata", "policy-uri-scheme"],
    ["userinfo", "https://user@claude.ai/oauth/claude-code-client-metadata", "client-id-userinfo"],
    [
      "userinfo with password",
      "https://u:p@claude.ai/oauth/claude-code-client-metadata",
      "client-id-userinfo",
    ],
    ["query", "https://claude.ai/oauth/claude-code-client-metadata?v=1", "client-id-query"],
    ["empty query", "https://claude.ai/oauth/claude-code-client-metadata?", "client-id-query"],
    ["fragment", "https://claude.ai/oauth/claude-code-client-metadata#x", "client-id-fragment"],
    ["no path", "https://claude.ai", "client-id-path"],
    ["path /", "https://claude.ai/", "client-id-path"],
    ["dot-dot segment", "https://claude.ai/oauth/../claude-code-client-metadata", "client-id-dot-segment"],
    ["dot segment", "https://claude.ai/./oauth/claude-code-client-metadata", "client-id-dot-segment"],
    [
      "encoded dot-dot",
      "https://claude.ai/oauth/%2e%2e/claude-code-client-metadata",
      "client-id-dot-segment",
    ],
    [
      "encoded dot, upper case",
      "https://claude.ai/oauth/%2E/claude-code-client-metadata",
      "client-id-dot-segment",
    ],
    [
      "mixed encoded dot-dot",
      "https://claude.ai/oauth/.%2E/claude-code-client-metadata",
      "client-id-dot-segment",
    ],
    ["trailing dot-dot", "https://claude.ai/oauth/..", "client-id-dot-segment"],
  ];
  for (const [name, clientId, rule] of cases) {
    it(`refuses ${name}: ${clientId}`, async () => {
      const fetcher = fakeFetcher({});
      const result = await resolveCimdClient(clientId, { config: presetConfig("claude-code"), fetcher });
      refused(
        result,
        rule.startsWith("policy") || rule === "client-id-url" ? "invalid_client" : "invalid_request",
        rule,
      );
      assert.equal(fetcher.calls.length, 0);
    });
  }

  it("refuses an ftp client_id even when a policy lists the scheme", async () => {
    const config = presetConfig("claude-code");
    (config.policies[0] as { uriSchemes: string[] }).uriSchemes = ["https", "ftp"];
    refused(
      await resolveCimdClient("ftp://claude.ai/oauth/claude-code-client-metadata", {
        config,
        fetcher: fakeFetcher({}),
      }),
      "invalid_request",
      "client-id-scheme",
    );
  });
});

describe("resolveCimdClient: document rules", () => {
  async function withDocument(
    document: unknown,
    change: (config: CimdConfig) => void = () => {},
    redirectUri?: string,
  ): Promise<CimdResolution> {
    const config = presetConfig("claude-code");
    change(config);
    return resolveCimdClient(CLAUDE_CODE_ID, {
      config,
      fetcher: fakeFetcher({ [CLAUDE_CODE_ID]: document }),
      redirectUri,
    });
  }
  const doc = (patch: Record<string, unknown>) => ({ ...claudeCodeDocument(), ...patch });
  const profile = (config: CimdConfig) => config.profiles[0] as unknown as Record<string, unknown>;

  it("refuses a document that is not a JSON object", async () => {
    refused(await withDocument([claudeCodeDocument()]), "invalid_request", "document-json");
    refused(await withDocument("text"), "invalid_request", "document-json");
  });

  it("refuses a client_id that does not equal the URL exactly", async () => {
    refused(
      await withDocument(doc({ client_id: `${CLAUDE_CODE_ID}/` })),
      "invalid_request",
      "document-client-id",
    );
    refused(
      await withDocument(doc({ client_id: CLAUDE_CODE_ID.toUpperCase() })),
      "invalid_request",
      "document-client-id",
    );
    refused(await withDocument(doc({ client_id: undefined })), "invalid_request", "document-client-id");
  });

  it("refuses missing, empty or non-string redirect_uris", async () => {
    for (const redirect_uris of [undefined, [], "http://localhost/callback", [42]]) {
      refused(await withDocument(doc({ redirect_uris })), "invalid_request", "document-redirect-uris");
    }
  });

  it("refuses client_secret and client_secret_* authentication", async () => {
    refused(
      await withDocument(doc({ client_secret: "s3cret" })),
      "invalid_request",
      "document-client-secret",
    );
    for (const method of ["client_secret_basic", "client_secret_post", "client_secret_jwt"]) {
      const description = refused(
        await withDocument(doc({ token_endpoint_auth_method: method })),
        "invalid_request",
        "document-auth-method",
      );
      assert.match(description, /symmetric client authentication/);
    }
  });

  it("Only Allow Confidential Client refuses public clients, explicit or by default", async () => {
    const only = (config: CimdConfig) => {
      profile(config).onlyAllowConfidentialClient = true;
    };
    refused(await withDocument(claudeCodeDocument(), only), "invalid_request", "confidential-only");
    refused(
      await withDocument(doc({ token_endpoint_auth_method: undefined }), only),
      "invalid_request",
      "confidential-only",
    );
    const confidential = await withDocument(doc({ token_endpoint_auth_method: "private_key_jwt" }), only);
    assert.ok(confidential.ok);
  });

  it("refuses a redirect URI on a host outside the profile's trusted domains", async () => {
    const description = refused(
      await withDocument(doc({ redirect_uris: ["https://attacker.example/callback"] })),
      "invalid_request",
      "redirect-uri-domain",
    );
    assert.match(
      description,
      /attacker\.example is not in the trusted domains of profile cimd-profile-claude-code/,
    );
  });

  it("refuses a loopback callback when localhost is missing from the profile list", async () => {
    refused(
      await withDocument(claudeCodeDocument(), (config) => {
        profile(config).trustedDomains = ["claude.ai", "127.0.0.1"];
      }),
      "invalid_request",
      "redirect-uri-domain",
    );
  });

  it("requires https redirect URIs except loopback http, unless Allow http scheme", async () => {
    const httpRedirect = doc({ redirect_uris: ["http://claude.ai/callback"] });
    refused(await withDocument(httpRedirect), "invalid_request", "redirect-uri-scheme");
    const allowed = await withDocument(httpRedirect, (config) => {
      profile(config).allowHttpScheme = true;
    });
    assert.ok(allowed.ok);
    refused(
      await withDocument(doc({ redirect_uris: ["com.example.app:/callback"] })),
      "invalid_request",
      "redirect-uri-scheme",
    );
  });

  it("refuses a redirect URI with a fragment, or that is not a URL", async () => {
    refused(
      await withDocument(doc({ redirect_uris: ["https://claude.ai/cb#frag"] })),
      "invalid_request",
      "redirect-uri-fragment",
    );
    refused(await withDocument(doc({ redirect_uris: ["/callback"] })), "invalid_request", "redirect-uri-url");
  });

  it("Restrict same domain keeps redirect URIs on the client_id's domain", async () => {
    const same = (config: CimdConfig) => {
      profile(config).restrictSameDomain = true;
      profile(config).trustedDomains = ["*.claude.ai", "localhost", "127.0.0.1"];
    };
    refused(await withDocument(claudeCodeDocument(), same), "invalid_request", "redirect-uri-same-domain");
    const ok = await withDocument(
      doc({ redirect_uris: ["https://claude.ai/cb", "https://app.claude.ai/cb"] }),
      same,
    );
    assert.ok(ok.ok, !ok.ok ? ok.description : "");
  });

  it("checks the document's other URLs against the profile's trusted domains", async () => {
    const description = refused(
      await withDocument(doc({ logo_uri: "https://cdn.example/logo.png" })),
      "invalid_request",
      "document-uri",
    );
    assert.match(description, /logo_uri host cdn\.example/);
    refused(
      await withDocument(doc({ jwks_uri: "http://claude.ai/jwks" })),
      "invalid_request",
      "document-uri",
    );
  });

  it("refuses a redirect_uri the document does not list", async () => {
    const cases = [
      "http://localhost:5000/other",
      "https://localhost:5000/callback",
      "http://localhost.attacker.example:5000/callback",
      "http://127.0.0.2:5000/callback",
    ];
    for (const redirectUri of cases) {
      refused(
        await withDocument(claudeCodeDocument(), () => {}, redirectUri),
        "invalid_request",
        "redirect-uri-mismatch",
      );
    }
  });
});
