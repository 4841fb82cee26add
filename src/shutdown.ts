import type { Server } from "node:http";
import type { Socket } from "node:net";

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

  /** Milliseconds each step took, in order, once run. */
  readonly durations: { name: string; ms: number }[] = [];

  /** Runs every step once (later calls get the same promise). */
  run(deadline: number): Promise<void> {
    this.#running ??= (async () => {
      let failure: Error | undefined;
      for (const step of this.#steps) {
        const t0 = performance.now();
        try {
          await step.stop(deadline);
        } catch (error) {
          failure ??= new Error(`${step.name}: ${(error as Error).message}`);
        }
        this.durations.push({ name: step.name, ms: Math.round(performance.now() - t0) });
      }
      if (failure) throw failure;
    })();
    return this.#running;
  }
}

/**
 * Follows a listener's connections from the start, so that a stop can close those without a response in
 * progress. Node's own closeIdleConnections() misses some: after a burst of requests a keep-alive
 * connection can stay "active" to Node's connection list with no request left to answer (measured: 58 of
 * the REST API's connections right after the gateway benchmark's 200-client soak), and would then hold
 * close() until the keep-alive timeout.
 */
export function trackConnections(server: Server): ReadonlySet<Socket> {
  const sockets = new Set<Socket>();
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  return sockets;
}

/** The response a server socket is writing, if any (what Node's closeIdleConnections checks too). */
const answering = (socket: Socket) => {
  const response = (socket as Socket & { _httpMessage?: { writableFinished?: boolean } | null })._httpMessage;
  return response != null && !response.writableFinished;
};

/**
 * Drains a listener being closed: keep-alive connections are closed as soon as they have no response in
 * progress (Node's close() closes idle ones only once, so a response finishing afterwards would keep its
 * connection open until the keep-alive timeout), and whatever is still open at the deadline is cut.
 * Resolves when `closed` (the listener's own close) resolves.
 */
export async function drainListener(
  server: Server,
  closed: Promise<unknown>,
  deadline: number,
  sockets?: ReadonlySet<Socket>,
): Promise<void> {
  const closeIdle = () => {
    server.closeIdleConnections();
    if (sockets) for (const socket of sockets) if (!answering(socket)) socket.destroy();
  };
  closeIdle();
  const sweep = setInterval(closeIdle, 50);
  const cut = setTimeout(() => server.closeAllConnections(), Math.max(0, deadline - Date.now()));
  try {
    await closed;
  } finally {
    clearInterval(sweep);
    clearTimeout(cut);
  }
}
