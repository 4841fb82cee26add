/**
 * Which browser origins may call the MCP endpoints: the gateway's own origin, loopback origins (local
 * tools such as MCP Inspector) and configured ones. A present but foreign Origin is refused, which is
 * what defeats DNS rebinding.
 */
export function createOriginPolicy(baseUrl: string, extra: readonly string[]): (origin: string) => boolean {
  const allowed = new Set([new URL(baseUrl).origin, ...extra.map((o) => o.replace(/\/$/, ""))]);
  return (origin) => {
    if (allowed.has(origin)) return true;
    try {
      const url = new URL(origin);
      return (
        (url.protocol === "http:" || url.protocol === "https:") &&
        ["localhost", "127.0.0.1", "[::1]"].includes(url.hostname)
      );
    } catch {
      return false;
    }
  };
}

export const CORS_ALLOW_HEADERS =
  "Authorization, Content-Type, Accept, Mcp-Session-Id, MCP-Protocol-Version, Last-Event-ID, Mcp-Method, Mcp-Name";
export const CORS_EXPOSE_HEADERS = "Mcp-Session-Id, WWW-Authenticate, MCP-Protocol-Version";
export const CORS_ALLOW_METHODS = "GET, POST, DELETE, OPTIONS";
