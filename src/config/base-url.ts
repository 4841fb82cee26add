/** The base_url rules of DESIGN.md, as a pure function: inputs in, URL or the reason out. */
interface BaseUrlInput {
  publicUrl?: string | undefined;
  https: boolean;
  /** The gateway's user access port. */
  port: number;
  fqdn: string;
  platform: NodeJS.Platform;
  /** `--local`: development on this machine, base_url on localhost unless PUBLIC_URL is set. */
  local?: boolean | undefined;
}

type BaseUrlResult = { ok: true; baseUrl: string } | { ok: false; reason: string };

export const HTTP_PORT = 8090;
export const HTTPS_PORT = 443;

export function resolveBaseUrl(input: BaseUrlInput): BaseUrlResult {
  if (input.publicUrl) return normalizePublicUrl(input.publicUrl);
  // AI clients accept plain http only towards loopback: localhost is what makes a local sign-in work.
  const host = input.local ? "localhost" : input.fqdn;
  if (input.https) {
    const port = input.port === HTTPS_PORT ? "" : `:${input.port}`;
    return { ok: true, baseUrl: `https://${host}${port}` };
  }
  if (input.local) return { ok: true, baseUrl: `http://${host}:${input.port}` };
  if (input.platform === "win32") {
    // The FQDN of a Windows host cannot be derived reliably: the administrator states it.
    return {
      ok: false,
      reason:
        "PUBLIC_URL is not set. On a Windows installation accessed over http, create a SYSTEM environment " +
        `variable PUBLIC_URL=http://<gateway-fqdn>:${input.port} (the fully qualified domain name of this ` +
        "machine and the user access port), then restart the gateway services.",
    };
  }
  return { ok: true, baseUrl: `http://${input.fqdn}:${input.port}` };
}

function normalizePublicUrl(value: string): BaseUrlResult {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return {
      ok: false,
      reason: `PUBLIC_URL must be an absolute URL such as http://gw.example.com:8090, got "${value}"`,
    };
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return { ok: false, reason: `PUBLIC_URL must use http or https, got "${url.protocol.replace(":", "")}"` };
  }
  if (url.pathname !== "/" || url.search || url.hash || url.username || url.password) {
    return {
      ok: false,
      reason: `PUBLIC_URL must be scheme://host[:port] with no path, query, fragment or credentials, got "${value}"`,
    };
  }
  // URL drops default ports (443 for https, 80 for http), which is the form clients compare against.
  return { ok: true, baseUrl: url.origin };
}
