import { AsyncLocalStorage } from "node:async_hooks";

/**
 * Where a command reads and writes: the process's streams and environment when `imaging` runs, captured
 * ones when a test runs a command in its own process (run.ts). Commands reach them through cliIo() rather
 * than `process`, so one invocation never sees another's output, environment or exit code.
 */
export interface CliIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown; isTTY?: boolean };
  stdin: AsyncIterable<string | Buffer>;
  env: NodeJS.ProcessEnv;
  /** The exit code the invocation ends with unless an error sets another. */
  exitCode: number;
}

const current = new AsyncLocalStorage<CliIo>();

const processIo: CliIo = {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
  get exitCode() {
    return typeof process.exitCode === "number" ? process.exitCode : 0;
  },
  set exitCode(code: number) {
    process.exitCode = code;
  },
};

export function cliIo(): CliIo {
  return current.getStore() ?? processIo;
}

export function withCliIo<T>(io: CliIo, work: () => Promise<T>): Promise<T> {
  return current.run(io, work);
}

export function processCliIo(): CliIo {
  return processIo;
}
