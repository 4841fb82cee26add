import type { Server } from "node:http";

/** One step of the stop: `deadline` (epoch ms) is when it must be done, cutting what is left if need be. */
export type StopStep = (deadline: number) => Promise<void>;

/**
 * The service's stop, as one ordered list of steps sharing one deadline: what faces clients first (the
 * gateway), then what it calls (MCP servers, REST API), then what they use (store readers, the store).
 * Each step is awaited before the next, so a part never loses what it depends on while it drains.
 * A step that fails does not stop the ones after it; the first failure is reported at the end.
 */
export class ShutdownSequence {
  readonly #steps: { name: string; stop: StopStep }[] = [];
  #running: Promise<void> | undefined;

  /** Appends a step: steps run in the order they were added. */
  add(name: string, stop: StopStep): void {
    this.#steps.push({ name, stop });
  }

  /** Runs every step once (later calls get the same promise). */
  run(deadline: number): Promise<void> {
    this.#running ??= (async () => {
      let failure: Error | undefined;
      for (const step of this.#steps) {
        try {
          await step.stop(deadline);
        } catch (error) {
          failure ??= new Error(`${step.name}: ${(error as Error).message}`);
        }
      }
      if (failure) throw failure;
    })();
    return this.#running;
  }
}

/**
 * Drains a listener being closed: keep-alive connections are closed as soon as they are idle (Node's
 * close() does it only once, so a response finishing afterwards would keep its connection open until
 * the keep-alive timeout), and whatever is still open at the deadline is cut. Resolves when `closed`
 * (the listener's own close) resolves.
 */
export async function drainListener(
  server: Server,
  closed: Promise<unknown>,
  deadline: number,
): Promise<void> {
  const sweep = setInterval(() => server.closeIdleConnections(), 50);
  const cut = setTimeout(() => server.closeAllConnections(), Math.max(0, deadline - Date.now()));
  try {
    await closed;
  } finally {
    clearInterval(sweep);
    clearTimeout(cut);
  }
}
