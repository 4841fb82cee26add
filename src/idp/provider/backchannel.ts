import type { IncomingMessage, ServerResponse } from "node:http";
import { inject } from "light-my-request";
import type { EmbeddedIdp } from "./embedded-idp.ts";

/**
 * How the gateway reaches the embedded identity provider of its own process (discovery, keys, token
 * exchange): its requests for URLs under `publicPrefix` (base_url's `/auth`) are handed to the
 * provider's request handler in this process (light-my-request), not sent to the gateway's own
 * listener. A request in flight keeps reaching the provider while the listener stops (a graceful stop
 * closes it first), a key fetch never queues behind the load balancer or reaches another replica, and
 * no loopback connection is spent. Other URLs go to the network.
 */
export function inProcessProviderFetch(publicPrefix: string, idp: Pick<EmbeddedIdp, "handle">): typeof fetch {
  const from = publicPrefix.replace(/\/+$/, "");
  const handler = (req: IncomingMessage, res: ServerResponse) => idp.handle(req, res, "127.0.0.1");
  return async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    if (url !== from && !url.startsWith(`${from}/`)) return fetch(input, init);
    const request = new Request(input, init);
    request.signal.throwIfAborted();
    const target = new URL(request.url);
    const body =
      request.method === "GET" || request.method === "HEAD"
        ? undefined
        : Buffer.from(await request.arrayBuffer());
    const injected = inject(handler, {
      method: request.method as "GET",
      url: `${target.pathname}${target.search}`,
      authority: target.host,
      headers: Object.fromEntries(request.headers),
      remoteAddress: "127.0.0.1",
      ...(body ? { payload: body } : {}),
    });
    const aborted = new Promise<never>((_, reject) =>
      request.signal.addEventListener("abort", () => reject(request.signal.reason), { once: true }),
    );
    aborted.catch(() => {});
    const answer = await Promise.race([injected, aborted]);
    const headers = new Headers();
    for (const [name, value] of Object.entries(answer.headers)) {
      if (value === undefined) continue;
      for (const one of Array.isArray(value) ? value : [value]) headers.append(name, String(one));
    }
    const empty = answer.statusCode === 204 || answer.statusCode === 304 || request.method === "HEAD";
    return new Response(empty ? null : new Uint8Array(answer.rawPayload), {
      status: answer.statusCode,
      headers,
    });
  };
}
