import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface CallbackServer {
  url: string;
  /** Resolves with the query of the next request to /callback. */
  next(): Promise<URLSearchParams>;
  close(): Promise<void>;
}

/** A loopback redirect target like the one Claude Code opens on a random port. */
export async function startCallbackServer(): Promise<CallbackServer> {
  let deliver: ((params: URLSearchParams) => void) | undefined;
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    res.writeHead(200, { "content-type": "text/html" }).end("<p>Signed in. You can close this window.</p>");
    if (url.pathname === "/callback") deliver?.(url.searchParams);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`,
    next: () =>
      new Promise((resolve) => {
        deliver = resolve;
      }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
