import type { AddressInfo } from "node:net";
import { connect, createServer, type Socket } from "node:net";

export interface TcpRelay {
  port: number;
  /** Stops accepting and cuts every open connection: the target looks down. */
  pause(): Promise<void>;
  /** Accepts again on the same port. */
  resume(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A loopback TCP relay in front of a real server (Keycloak), so that a test can make it unreachable
 * and reachable again without stopping it: the network failing, not a double of the server.
 */
export async function startTcpRelay(target: { host: string; port: number }): Promise<TcpRelay> {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      socket.on("error", () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => {
        server.off("error", reject);
        resolve();
      });
    });
  await listen(0);
  const port = (server.address() as AddressInfo).port;
  const pause = async () => {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const socket of sockets) socket.destroy();
    await closed;
  };
  return {
    port,
    pause,
    resume: () => listen(port),
    close: async () => {
      if (server.listening) await pause();
    },
  };
}
