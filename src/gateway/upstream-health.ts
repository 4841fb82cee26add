import { request } from "undici";

export type Health = "UP" | "DOWN" | "UNKNOWN";

export interface UpstreamHealth {
  snapshot(): Record<string, Health>;
  stop(): void;
}

/**
 * Probes upstream health endpoints in the background, so the open healthcheck answers from memory and
 * stays cheap however often it is polled.
 */
export function watchUpstreams(urls: Record<string, string>, intervalMs = 10_000): UpstreamHealth {
  const state: Record<string, Health> = Object.fromEntries(Object.keys(urls).map((k) => [k, "UNKNOWN"]));
  const probe = async () => {
    await Promise.all(
      Object.entries(urls).map(async ([name, url]) => {
        try {
          const response = await request(url, { headersTimeout: 3_000, bodyTimeout: 3_000 });
          await response.body.dump();
          state[name] = response.statusCode === 200 ? "UP" : "DOWN";
        } catch {
          state[name] = "DOWN";
        }
      }),
    );
  };
  void probe();
  const timer = setInterval(() => void probe(), intervalMs);
  timer.unref();
  return { snapshot: () => ({ ...state }), stop: () => clearInterval(timer) };
}
