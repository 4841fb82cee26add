/** Maven Central behind a loopback relay that records each path asked (ranged requests relayed as such). */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { CENTRAL } from "./maven-subjects.ts";

export interface Counted {
  server: Server;
  url: string;
  requests: string[];
}

export function listen(server: Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
    ),
  );
}

/** A relay to Maven Central: point MAVEN_REPOSITORY_URL at `url`. */
export async function centralRelay(): Promise<Counted> {
  const requests: string[] = [];
  const server = createServer(async (request, response) => {
    const path = (request.url ?? "/").replace(/^\/maven2\//, "");
    requests.push(path);
    const range = request.headers.range;
    const upstream = await fetch(`${CENTRAL}/${path}`, { headers: range ? { range } : {} });
    const contentRange = upstream.headers.get("content-range");
    response.writeHead(upstream.status, {
      "content-type": upstream.headers.get("content-type") ?? "application/octet-stream",
      ...(contentRange ? { "content-range": contentRange } : {}),
    });
    response.end(Buffer.from(await upstream.arrayBuffer()));
  });
  return { server, url: `${await listen(server)}/maven2`, requests };
}
