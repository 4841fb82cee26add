import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { Readable } from "node:stream";
import { fileURLToPath } from "node:url";

export const CLI = fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs an `imaging` command in this process, through the same entry as the `imaging` binary (run.ts),
 * with its standard output, error and exit code captured and `env` over this process's environment.
 * `imaging start` (signals, process exit) runs in a process of its own here too; anything else that needs
 * one (NODE_OPTIONS, NODE_EXTRA_CA_CERTS, the Node.js floor check) goes through runCliProcess.
 */
export async function runCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return runCliWithStdin(args, undefined, env);
}

/** Like runCli, with `input` on the command's standard input (none when undefined). */
export async function runCliWithStdin(
  args: string[],
  input: string | undefined,
  env: NodeJS.ProcessEnv = {},
): Promise<CliResult> {
  // The service installs signal handlers and exits the process: `imaging start` always gets its own.
  if (args[0] === "start" && !args.includes("--help")) return runCliProcessWithStdin(args, input, env);
  const { run } = await import("../../src/cli/run.ts");
  let stdout = "";
  let stderr = "";
  const code = await run(args, {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text), isTTY: false },
    stdin: Readable.from(input === undefined ? [] : [input]),
    env: { ...process.env, ...env },
    exitCode: 0,
  });
  return { code, stdout, stderr };
}

/** Runs the `imaging` command as a user would, in its own process. */
export async function runCliProcess(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return runCliProcessWithStdin(args, undefined, env);
}

/** Like runCliProcess, with `input` written to the command's standard input (none when undefined). */
export async function runCliProcessWithStdin(
  args: string[],
  input: string | undefined,
  env: NodeJS.ProcessEnv = {},
): Promise<CliResult> {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { ...process.env, ...env },
    stdio: [input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
  });
  if (input !== undefined) child.stdin?.end(input);
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d) => {
    stdout += d;
  });
  child.stderr?.on("data", (d) => {
    stderr += d;
  });
  const [code] = (await once(child, "close")) as [number | null];
  return { code, stdout, stderr };
}

/**
 * A spawned service's internal listeners (REST API, both MCP servers) on ephemeral loopback ports, so that
 * files running side by side never collide; the gateway's port is the caller's (`--port`).
 */
export const INTERNAL_PORTS_ON_LOOPBACK = {
  REST_PORT: "0",
  MCP_ANALYSIS_PORT: "0",
  MCP_GATEKEEPER_PORT: "0",
  IMAGING_BIND_ADDRESS: "127.0.0.1",
} as const;

/**
 * Starts `imaging start ... --json` and resolves with its start-up summary once it listens. `stop()` sends
 * SIGTERM (unless it has already exited) and resolves with its exit code.
 */
export async function spawnService(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  /**
   * Only a guard against a start that never ends: test files run in parallel (run-suite.ts) on a shared
   * 2-core machine, where a start that takes 3 s alone took over 30 s under load.
   */
  startTimeoutMs = 120_000,
  /** The `imaging` entry to run: another build's (a copy of src/ with a new migration), else this one's. */
  cli = CLI,
): Promise<{
  child: ChildProcess;
  summary: { baseUrl: string; gateway: string; rest: string; demo: string[]; metrics?: string | null };
  stderr: () => string;
  /** Everything written to stdout: the summary, then the log lines (JSON, one a line) at LOG_LEVEL. */
  stdout: () => string;
  stop: () => Promise<number | null>;
}> {
  const child = spawn(process.execPath, [cli, "start", "--json", ...args], {
    // No drain before the stop (SHUTDOWN_DRAIN): no load balancer waits on these; a test that wants one says so.
    env: { ...process.env, LOG_LEVEL: "silent", SHUTDOWN_DRAIN: "0", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stderr?.on("data", (d) => {
    stderr += d;
  });
  const summary = await new Promise<{
    baseUrl: string;
    gateway: string;
    rest: string;
    demo: string[];
    metrics?: string | null;
  }>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL"); // the caller never gets it to stop
      reject(new Error(`service did not start in ${startTimeoutMs / 1000} s: ${stderr}`));
    }, startTimeoutMs);
    child.stdout?.on("data", (d) => {
      stdout += d;
      try {
        // Log lines (LOG_LEVEL other than silent) may come before and after the summary.
        const summaryText = stdout
          .split("\n")
          .filter((line) => !line.startsWith('{"level":'))
          .join("\n");
        const parsed = JSON.parse(summaryText);
        clearTimeout(timer);
        resolve(parsed);
      } catch {
        // JSON not complete yet
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`service exited with ${code}: ${stderr}`));
    });
  });
  const stop = async (): Promise<number | null> => {
    if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
    const exited = once(child, "exit") as Promise<[number | null]>;
    child.kill("SIGTERM");
    return (await exited)[0];
  };
  return { child, summary, stderr: () => stderr, stdout: () => stdout, stop };
}
