import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Command } from "commander";
import { MCP_ROUTES, MCP_SERVER_NAMES } from "../../contracts/platform.ts";
import { deploymentConfig, STARTED_LOCAL_HELP } from "../context.ts";
import { CliError, emit } from "../output.ts";

const SERVERS = MCP_ROUTES;
type ServerKind = keyof typeof SERVERS;
const CLIENTS = ["claude-code", "vscode"] as const;

interface ClientConfigOptions {
  server: string;
  name?: string;
  write?: boolean;
  workspace: string;
  config?: string;
  port?: string;
  local?: boolean;
  json?: boolean;
}

/** What an AI client needs: the gateway URL of the MCP server, built by the specification's rules. */
export function registerClientConfig(program: Command): void {
  program
    .command("client-config")
    .description("Print what to give Claude Code or VS Code to connect to an MCP server through the gateway")
    .argument("<client>", `${CLIENTS.join(" or ")}`)
    .option("--server <server>", "analysis or gatekeeper", "analysis")
    .option(
      "--name <name>",
      `server name in the client (default: ${MCP_SERVER_NAMES.analysis}, or ${MCP_SERVER_NAMES.gatekeeper})`,
    )
    .option("--write", "vscode: write or merge <workspace>/.vscode/mcp.json")
    .option("--workspace <dir>", "vscode: workspace folder for --write", ".")
    .option("--config <file>", "JSON config file")
    .option("--port <n>", "user access port, as given to imaging start")
    .option("--local", STARTED_LOCAL_HELP)
    .option("--json", "print JSON")
    .action(async (client: string, options: ClientConfigOptions) => {
      if (!(CLIENTS as readonly string[]).includes(client)) {
        throw new CliError(`client must be ${CLIENTS.join(" or ")}, got '${client}'`, 2);
      }
      if (!(options.server in SERVERS))
        throw new CliError(`--server must be analysis or gatekeeper, got '${options.server}'`, 2);
      const kind = options.server as ServerKind;
      const name = options.name ?? MCP_SERVER_NAMES[kind];
      if (!/^[A-Za-z0-9_.-]+$/.test(name))
        throw new CliError(`--name may hold letters, digits, '.', '_' and '-', got '${name}'`, 2);
      const { baseUrl } = await deploymentConfig({
        config: options.config,
        port: options.port,
        local: options.local,
      });
      const url = `${baseUrl}${SERVERS[kind]}`;
      const notes = insecureNote(url);

      if (client === "claude-code") {
        const command = `claude mcp add --transport http --scope user ${name} ${url}`;
        emit(Boolean(options.json), { client, name, url, command }, () =>
          [
            command,
            "",
            "Then run /mcp in Claude Code, select the server, choose Authenticate and sign in in the browser;",
            "`claude mcp list` shows it connected.",
            ...notes,
          ].join("\n"),
        );
        return;
      }

      const entry = { type: "http", url };
      if (!options.write) {
        const document = { servers: { [name]: entry } };
        emit(Boolean(options.json), document, () =>
          [
            JSON.stringify(document, null, 2),
            "",
            "Put this in .vscode/mcp.json (or run with --write), start the server from mcp.json, click Allow and",
            "sign in in the browser; in Chat, Agent mode, the tools appear in the tool picker.",
            ...notes,
          ].join("\n"),
        );
        return;
      }
      const file = join(resolve(options.workspace), ".vscode", "mcp.json");
      const merged = mergeServer(file, name, entry);
      mkdirSync(join(resolve(options.workspace), ".vscode"), { recursive: true });
      writeFileSync(file, `${JSON.stringify(merged, null, 2)}\n`);
      emit(
        Boolean(options.json),
        { file, servers: merged.servers },
        () => `Wrote server '${name}' (${url}) to ${file}`,
      );
    });
}

/** Adds or replaces one server, keeping everything else the file holds. */
function mergeServer(
  file: string,
  name: string,
  entry: object,
): { servers: Record<string, unknown> } & Record<string, unknown> {
  if (!existsSync(file)) return { servers: { [name]: entry } };
  let current: unknown;
  try {
    current = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new CliError(
      `${file} is not plain JSON (${(error as Error).message}); it was left unchanged: add the server by hand or remove comments`,
    );
  }
  if (typeof current !== "object" || current === null || Array.isArray(current)) {
    throw new CliError(`${file} does not hold a JSON object; it was left unchanged`);
  }
  const document = current as Record<string, unknown>;
  const servers = document.servers;
  if (servers !== undefined && (typeof servers !== "object" || servers === null || Array.isArray(servers))) {
    throw new CliError(`${file}: "servers" is not an object; it was left unchanged`);
  }
  return { ...document, servers: { ...(servers as Record<string, unknown> | undefined), [name]: entry } };
}

/** MCP clients accept plain http only towards loopback hosts. */
function insecureNote(url: string): string[] {
  const { protocol, hostname } = new URL(url);
  if (protocol !== "http:" || ["localhost", "127.0.0.1", "[::1]"].includes(hostname)) return [];
  return [
    "",
    `Note: ${url} is plain http on a non-loopback host. AI clients refuse http token endpoints there;`,
    "configure HTTPS (TLS_CERT_FILE, TLS_KEY_FILE) for anything beyond local development.",
  ];
}
