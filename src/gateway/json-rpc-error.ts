/** A JSON-RPC error body, the form MCP clients read when the gateway itself cannot serve a request. */
export function jsonRpcError(code: number, message: string, id: string | number | null = null) {
  return { jsonrpc: "2.0", id, error: { code, message } };
}

/** Best-effort id of the JSON-RPC request in a raw body, so the client can match the error. */
export function requestId(body: unknown): string | number | null {
  if (!Buffer.isBuffer(body) || body.length === 0 || body.length > 1_000_000) return null;
  try {
    const parsed = JSON.parse(body.toString("utf8")) as { id?: unknown };
    return typeof parsed.id === "string" || typeof parsed.id === "number" ? parsed.id : null;
  } catch {
    return null;
  }
}

/** Best-effort method of the JSON-RPC request in a raw body (a single request, not a batch). */
export function requestMethod(body: unknown): string | undefined {
  if (!Buffer.isBuffer(body) || body.length === 0 || body.length > 1_000_000) return undefined;
  try {
    const parsed = JSON.parse(body.toString("utf8")) as { method?: unknown };
    return typeof parsed.method === "string" ? parsed.method : undefined;
  } catch {
    return undefined;
  }
}
