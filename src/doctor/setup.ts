import { type Check, type CheckDefinition, fail, notApplicable, pass, warn } from "./check.ts";

/** Setup rules of the specification that depend on the configuration alone. */

export const WINDOWS_PUBLIC_URL: CheckDefinition = {
  id: "windows-public-url",
  title: "Windows over http has PUBLIC_URL",
};

const PUBLIC_URL_FIX =
  "Create a SYSTEM environment variable PUBLIC_URL=http://<gateway-fqdn>:8090 (this machine's fully " +
  "qualified domain name and the user access port), then restart the gateway services.";

const isIpLiteral = (host: string) => /^\d{1,3}(\.\d{1,3}){3}$/.test(host) || host.startsWith("[");

export function windowsPublicUrlCheck(input: {
  platform: NodeJS.Platform;
  https: boolean;
  publicUrl: string | undefined;
  /** `--local`: base_url is on localhost, nothing to derive. */
  local?: boolean;
}): Check {
  if (input.platform !== "win32")
    return notApplicable(WINDOWS_PUBLIC_URL, `not a Windows installation (platform ${input.platform})`);
  if (input.https)
    return notApplicable(WINDOWS_PUBLIC_URL, "HTTPS is configured: base_url is https://<fqdn>");
  if (input.local && !input.publicUrl)
    return notApplicable(
      WINDOWS_PUBLIC_URL,
      "--local: base_url is http://localhost:<port>, on this machine only",
    );
  if (!input.publicUrl)
    return fail(
      WINDOWS_PUBLIC_URL,
      "Windows installation accessed over http without PUBLIC_URL: its base_url cannot be derived",
      PUBLIC_URL_FIX,
    );
  const host = URL.parse(input.publicUrl)?.hostname ?? "";
  if (host === "localhost" || (!host.includes(".") && !isIpLiteral(host)))
    return warn(
      WINDOWS_PUBLIC_URL,
      `PUBLIC_URL=${input.publicUrl}: ${host || "its host"} is not a fully qualified domain name, other machines cannot use it`,
      PUBLIC_URL_FIX,
    );
  return pass(WINDOWS_PUBLIC_URL, `PUBLIC_URL=${input.publicUrl}`);
}

const INTERNAL_BIND: CheckDefinition = {
  id: "internal-bind",
  title: "The MCP servers are reachable only through the gateway",
};

/** Loopback addresses and names: what INTERNAL_BIND_ADDRESS should be. */
export function isLoopbackAddress(address: string): boolean {
  const bare = address
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, "");
  return bare === "localhost" || bare === "::1" || /^127(\.\d{1,3}){3}$/.test(bare);
}

interface InternalBindInput {
  internalBindAddress: string;
  /** MCP servers configured to run elsewhere: the setting and its URL. */
  upstreams: { setting: string; url: string }[];
  /** Internal endpoints that answered at a non-loopback address (this machine's, or base_url's host's). */
  exposed: string[];
  /** The non-loopback addresses the internal ports were tried at, for the record. */
  probedAddresses?: string[];
}

export function internalBindCheck(input: InternalBindInput): Check {
  const problems: string[] = [];
  if (!isLoopbackAddress(input.internalBindAddress))
    problems.push(
      `INTERNAL_BIND_ADDRESS=${input.internalBindAddress}: the REST API and the MCP servers accept connections from other machines`,
    );
  for (const upstream of input.upstreams) {
    const host = URL.parse(upstream.url)?.hostname ?? "";
    if (!isLoopbackAddress(host))
      problems.push(
        `${upstream.setting}=${upstream.url}: that MCP server runs on another host, make sure only the gateway reaches it`,
      );
  }
  for (const url of input.exposed) problems.push(`${url} answered from here, around the gateway`);
  if (problems.length === 0) {
    const tried = input.probedAddresses ?? [];
    const probed =
      tried.length > 0 ? `; their ports do not answer at ${tried.join(", ")} (non-loopback addresses)` : "";
    return pass(
      INTERNAL_BIND,
      `internal listeners bind to ${input.internalBindAddress} (loopback)${probed}: clients reach the MCP servers through the gateway only`,
    );
  }
  return warn(
    INTERNAL_BIND,
    `${problems.join("; ")} (a client calling an MCP server directly gets 401/403 from its tools: its token is not exchanged)`,
    "Set INTERNAL_BIND_ADDRESS=127.0.0.1 (the default) and restart, or firewall the internal ports so that only the gateway reaches the MCP servers.",
  );
}
