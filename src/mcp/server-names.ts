/**
 * The one name of each MCP server: what its `serverInfo.name` says, what the gateway's protected resource
 * metadata calls it, and what `imaging client-config`, `imaging start` and the console tell an AI client to
 * register it as. No imports, so the console bundle, the CLI and service.ts can all take it from here.
 */
export const MCP_SERVER_NAMES = {
  analysis: "imaging",
  gatekeeper: "imaging-gatekeeper",
} as const;
