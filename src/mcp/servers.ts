import { McpServer } from "@modelcontextprotocol/server";
import { MCP_ROUTES, MCP_SERVER_NAMES, type McpPath, type McpServerKind } from "../contracts/platform.ts";
import { VERSION } from "../version.ts";
import { ANALYSIS_INSTRUCTIONS, analysisTools } from "./analysis/tools.ts";
import { GATEKEEPER_INSTRUCTIONS, gatekeeperTools } from "./gatekeeper/tools.ts";
import { type AnyToolSpec, registerTools, type ToolEnvironment } from "./tool-kit.ts";

export type { McpServerKind };

export interface McpServerDefinition {
  kind: McpServerKind;
  /** MCP endpoint path, the same on the internal service as on the gateway. */
  path: McpPath;
  name: string;
  title: string;
  instructions: string;
  tools: readonly AnyToolSpec[];
}

export const MCP_SERVERS: Record<McpServerKind, McpServerDefinition> = {
  analysis: {
    kind: "analysis",
    path: MCP_ROUTES.analysis,
    name: MCP_SERVER_NAMES.analysis,
    title: "Imaging application analysis",
    instructions: ANALYSIS_INSTRUCTIONS,
    tools: analysisTools,
  },
  gatekeeper: {
    kind: "gatekeeper",
    path: MCP_ROUTES.gatekeeper,
    name: MCP_SERVER_NAMES.gatekeeper,
    title: "Imaging quality gate",
    instructions: GATEKEEPER_INSTRUCTIONS,
    tools: gatekeeperTools,
  },
};

/** A fresh MCP server of this kind with its tools registered (one per request or per 2025 session). */
export function createMcpServer(kind: McpServerKind, env: ToolEnvironment): McpServer {
  const definition = MCP_SERVERS[kind];
  const server = new McpServer(
    { name: definition.name, title: definition.title, version: VERSION },
    { instructions: definition.instructions, capabilities: { tools: { listChanged: false } } },
  );
  registerTools(server, env, definition.tools, kind);
  return server;
}
