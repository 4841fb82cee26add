import { once } from "node:events";
import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A loopback HTTP forwarder standing in for the load balancer's address (PUBLIC_URL) when a test must
 * choose which replica serves each request: `use("A")` pins one, `use("round-robin")` alternates. Not a
 * load balancer (so-lb's HAProxy tests are): it only makes "signed in on A, served by B" explicit.
 */
export interface SwitchProxy {
  url: string;
  port: number;
  use(target: string): void;
  /** Requests forwarded per backend name. */
  served: Record<string, number>;
  close(): Promise<void>;
}

export async function startSwitchProxy(
  port: number,
  backends: Record<string, () => number>,
): Promise<SwitchProxy> {
  const names = Object.keys(backends);
  let target = names[0] as string;
  let turn = 0;
  const served: Record<string, number> = Object.fromEntries(names.map((n) => [n, 0]));
  const server = createServer((req, res) => {
    const name = target === "round-robin" ? (names[turn++ % names.length] as string) : target;
    served[name] = (served[name] ?? 0) + 1;
    const backendPort = (backends[name] as () => number)();
    const upstream = request(
      { host: "127.0.0.1", port: backendPort, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", () => {
      if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
      res.end("backend unreachable");
    });
    req.pipe(upstream);
  });
  server.listen(port, "127.0.0.1");
  await once(server, "listening");
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${bound}`,
    port: bound,
    use(next) {
      target = next;
    },
    served,
    close: async () => {
      server.closeAllConnections();
      server.close();
    },
  };
}
