import { request } from "node:http";

export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The bytes as they came over the wire (not decoded). */
  body: Buffer;
}

/** One request with node:http, which shows the bytes on the wire as they are. */
export function rawRequest(
  url: string,
  headers: Record<string, string>,
  method = "GET",
  body?: string | Buffer,
): Promise<RawAnswer & { localPort: number }> {
  return new Promise((resolve, reject) => {
    let localPort = 0;
    const req = request(url, { method, headers, agent: false }, (res) => {
      localPort = res.socket.localPort ?? 0;
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks),
          localPort,
        }),
      );
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** Every header but the clock's and the connection's (`agent: false` closes each connection). */
export const withoutDate = (headers: RawAnswer["headers"]) => {
  const { date: _date, connection: _connection, ...rest } = headers;
  return rest;
};
