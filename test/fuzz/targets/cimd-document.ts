/**
 * A client ID metadata document as the identity provider meets it: the authorization request's client_id
 * and redirect_uri (first two lines of the input), the response's Cache-Control (third line) and body
 * (the rest), through the fetcher's body parsing, the cache lifetime and resolveCimdClient's checks.
 */
import { cacheLifetimeSeconds } from "../../../src/idp/cimd/cache-lifetime.ts";
import { parseDocumentBody } from "../../../src/idp/cimd/fetcher.ts";
import type { CimdConfig } from "../../../src/idp/cimd/model.ts";
import { resolveCimdClient } from "../../../src/idp/cimd/resolve.ts";
import { expectOneLine, FuzzFinding } from "./kit.ts";

const profile = (name: string, http: boolean, same: boolean, confidential: boolean) => ({
  name,
  executor: "client-id-metadata-document" as const,
  allowHttpScheme: http,
  restrictSameDomain: same,
  onlyAllowConfidentialClient: confidential,
  trustedDomains: ["*.example.com", "claude.ai", "localhost", "127.0.0.1", "::1", "vscode.dev"],
});
const CONFIG: CimdConfig = {
  profiles: [profile("strict", false, true, false), profile("lenient", true, false, false)],
  policies: [
    {
      name: "policy",
      condition: "client-id-uri",
      uriSchemes: ["https", "http"],
      trustedDomains: ["*.example.com", "claude.ai", "localhost", "vscode.dev"],
      profiles: ["lenient", "strict"],
      enabled: true,
    },
  ],
};

export async function fuzz(data: Buffer): Promise<void> {
  const text = data.toString("latin1");
  const [clientId = "", redirectUri = "", cacheControl = ""] = text.split("\n", 3);
  const body = data.subarray(
    Math.min(data.length, clientId.length + redirectUri.length + cacheControl.length + 3),
  );
  const seconds = cacheLifetimeSeconds(
    { "cache-control": cacheControl, expires: cacheControl, age: redirectUri },
    0,
  );
  if (!(seconds >= 300 && seconds <= 86_400))
    throw new FuzzFinding(`cache lifetime ${seconds} s out of bounds`);
  const resolution = await resolveCimdClient(clientId, {
    config: CONFIG,
    redirectUri: redirectUri === "" ? undefined : redirectUri,
    fetcher: {
      async fetchDocument() {
        return parseDocumentBody(body);
      },
    },
  });
  if (!resolution.ok) expectOneLine(resolution.description);
  else if (resolution.metadata.client_id !== clientId)
    throw new FuzzFinding("accepted a document for another client_id");
}
