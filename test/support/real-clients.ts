import { type ChildProcessWithoutNullStreams, execFileSync, spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { withCacheLockSync } from "./cache-lock.ts";

/**
 * Real MCP clients that only know dynamic client registration, installed from their registries into
 * a cache outside the repository (IMAGING_CI_CACHE, as .ci/run does), once per version.
 */
const CACHE = process.env.IMAGING_CI_CACHE ?? join(homedir(), ".cache", "imaging-ci");
export const MCP_REMOTE_VERSION = "0.15.1";
export const PYTHON_MCP_VERSION = "2.3.0";

/** mcp-remote from npm; returns its proxy script. */
export function ensureMcpRemote(): string {
  return ensureNpmTool(`mcp-remote@${MCP_REMOTE_VERSION}`, `mcp-remote-${MCP_REMOTE_VERSION}`, [
    "mcp-remote",
    "dist",
    "proxy.js",
  ]);
}

export const GEMINI_CLI_VERSION = "0.61.0";

/** Gemini CLI from npm (`@google/gemini-cli`); returns its entry script. */
export function ensureGeminiCli(): string {
  return ensureNpmTool(`@google/gemini-cli@${GEMINI_CLI_VERSION}`, `gemini-cli-${GEMINI_CLI_VERSION}`, [
    "@google",
    "gemini-cli",
    "bundle",
    "gemini.js",
  ]);
}

/**
 * `spec` installed from npm into `<cache>/<folder>` once (under the cache lock: test files run in
 * parallel); returns the path of `script` (segments under its node_modules).
 */
function ensureNpmTool(spec: string, folder: string, script: string[]): string {
  const prefix = join(CACHE, folder);
  const path = join(prefix, "node_modules", ...script);
  if (existsSync(path)) return path;
  withCacheLockSync(prefix, () => {
    if (existsSync(path)) return;
    mkdirSync(prefix, { recursive: true });
    const flags = ["--no-save", "--no-package-lock", "--no-audit", "--no-fund"];
    execFileSync("npm", ["install", "--prefix", prefix, ...flags, spec], { stdio: "pipe" });
  });
  return path;
}

/** The Python MCP SDK from PyPI in a virtual environment; returns its python. */
export function ensurePythonMcp(): string {
  const venv = join(CACHE, `python-mcp-${PYTHON_MCP_VERSION}`);
  const python = join(venv, "bin", "python");
  const marker = join(venv, ".installed");
  withCacheLockSync(venv, () => {
    if (existsSync(marker)) return;
    execFileSync("python3", ["-m", "venv", venv], { stdio: "pipe" });
    execFileSync(python, ["-m", "pip", "install", "-q", `mcp==${PYTHON_MCP_VERSION}`], { stdio: "pipe" });
    writeFileSync(marker, `${PYTHON_MCP_VERSION}\n`);
  });
  return python;
}

/**
 * A PATH whose `xdg-open` (and the other openers clients try on Linux) only succeeds: the clients
 * believe a browser opened, and the test drives headless Chromium to the URL they print instead.
 */
export function pathWithoutDesktopBrowser(): string {
  const dir = mkdtempSync(join(tmpdir(), "imaging-no-browser-"));
  for (const opener of ["xdg-open", "sensible-browser", "x-www-browser", "gnome-open", "www-browser"]) {
    writeFileSync(join(dir, opener), "#!/bin/sh\nexit 0\n");
    chmodSync(join(dir, opener), 0o755);
  }
  return [dir, dirname(process.execPath), process.env.PATH ?? ""].join(delimiter);
}

/** A child process speaking JSON-RPC over stdio (MCP's stdio transport), with its stderr kept. */
export class StdioPeer {
  readonly child: ChildProcessWithoutNullStreams;
  stderr = "";
  /** Every JSON line the process wrote on stdout. */
  readonly messages: Record<string, unknown>[] = [];
  #buffer = "";
  readonly #waiting = new Map<number, (message: Record<string, unknown>) => void>();
  readonly #stderrWatchers: { pattern: RegExp; resolve: (match: RegExpMatchArray) => void }[] = [];

  constructor(command: string, args: string[], env: NodeJS.ProcessEnv) {
    this.child = spawn(command, args, { env, stdio: ["pipe", "pipe", "pipe"] });
    this.child.stdout.setEncoding("utf8");
    this.child.stderr.setEncoding("utf8");
    this.child.stdout.on("data", (chunk: string) => {
      this.#buffer += chunk;
      let newline = this.#buffer.indexOf("\n");
      while (newline >= 0) {
        const line = this.#buffer.slice(0, newline).trim();
        this.#buffer = this.#buffer.slice(newline + 1);
        newline = this.#buffer.indexOf("\n");
        if (!line) continue;
        const message = JSON.parse(line) as Record<string, unknown>;
        this.messages.push(message);
        if (typeof message.id === "number") this.#waiting.get(message.id)?.(message);
      }
    });
    this.child.stderr.on("data", (chunk: string) => {
      this.stderr += chunk;
      for (const watcher of [...this.#stderrWatchers]) {
        const match = this.stderr.match(watcher.pattern);
        if (match) {
          this.#stderrWatchers.splice(this.#stderrWatchers.indexOf(watcher), 1);
          watcher.resolve(match);
        }
      }
    });
  }

  /** Resolves when stderr matches (or has matched), fails after `timeoutMs` or when the process exits. */
  waitForStderr(pattern: RegExp, timeoutMs = 30_000): Promise<RegExpMatchArray> {
    const already = this.stderr.match(pattern);
    if (already) return Promise.resolve(already);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no ${pattern} on stderr within ${timeoutMs} ms:\n${this.stderr}`)),
        timeoutMs,
      );
      const onExit = (code: number | null) =>
        reject(new Error(`exited (${code}) before ${pattern} on stderr:\n${this.stderr}`));
      this.child.once("exit", onExit);
      this.#stderrWatchers.push({
        pattern,
        resolve: (match) => {
          clearTimeout(timer);
          this.child.off("exit", onExit);
          resolve(match);
        },
      });
    });
  }

  exit(timeoutMs = 30_000): Promise<number | null> {
    if (this.child.exitCode !== null) return Promise.resolve(this.child.exitCode);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`still running after ${timeoutMs} ms:\n${this.stderr}`)),
        timeoutMs,
      );
      this.child.once("exit", (code) => {
        clearTimeout(timer);
        resolve(code);
      });
    });
  }

  request(id: number, method: string, params: unknown, timeoutMs = 30_000): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no answer to ${method} within ${timeoutMs} ms:\n${this.stderr}`)),
        timeoutMs,
      );
      this.#waiting.set(id, (message) => {
        clearTimeout(timer);
        resolve(message);
      });
      this.child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
    });
  }

  notify(method: string, params: unknown = {}): void {
    this.child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method, params })}\n`);
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once("exit", resolve));
    this.child.kill("SIGTERM");
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 5_000);
    await exited;
    clearTimeout(timer);
  }
}

/**
 * As an AI client's host does through mcp-remote once it says the proxy is up: initialize, then call
 * the `applications` tool; the names it lists (the initialize answer is checked on the way).
 */
export async function applicationsThroughProxy(peer: StdioPeer): Promise<string[] | undefined> {
  await peer.waitForStderr(/Proxy established successfully/, 60_000);
  const init = await peer.request(1, "initialize", {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "stdio-host", version: "1.0.0" },
  });
  if (!init.result) throw new Error(`initialize failed: ${JSON.stringify(init)}`);
  peer.notify("notifications/initialized");
  const call = await peer.request(2, "tools/call", { name: "applications", arguments: {} });
  const result = call.result as { structuredContent?: { applications: { name: string }[] } } | undefined;
  if (!result?.structuredContent) throw new Error(`tools/call answered: ${JSON.stringify(call)}`);
  return result.structuredContent.applications.map((a) => a.name);
}
