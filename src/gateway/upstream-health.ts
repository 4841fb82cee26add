import type { FastifyBaseLogger } from "fastify";
import { request } from "undici";
import { upstreamUp } from "../observability/metrics.ts";

export type Health = "UP" | "DOWN" | "UNKNOWN";

export interface UpstreamHealth {
  snapshot(): Record<string, Health>;
  /** A proxied request could not reach the upstream (the client gets 502). */
  failed(name: string, error: unknown): void;
  /** A proxied request got an answer from the upstream. */
  reached(name: string): void;
  /**
   * The upstream's state, probed now unless it is known UP (readiness asks this: right after start, or
   * during an outage, the answer must not wait for the next background probe). Probes of one upstream
   * that overlap share one request.
   */
  current(name: string): Promise<Health>;
  stop(): void;
}

export interface WatchOptions {
  intervalMs?: number;
  /** How often, at most, an outage that lasts is logged again (with the count of failures since). */
  reportEveryMs?: number;
  log?: FastifyBaseLogger | undefined;
  now?: () => number;
}

interface Outage {
  since: number;
  lastReport: number;
  /** Failures not logged yet. */
  unreported: number;
  total: number;
}

const describe = (error: unknown) =>
  error instanceof Error
    ? `${error.message}${error.cause instanceof Error ? `: ${error.cause.message}` : ""}`
    : String(error);

/**
 * What the gateway knows of its upstreams. Proxied requests report what they observe as they observe
 * it, so the open healthcheck says DOWN from the first 502 and UP from the first answer again; the
 * background probes cover the quiet periods (their failures count as failures too). An outage is logged once with its error, then at most
 * every `reportEveryMs` with the count of failed requests, and its end once: a dead upstream under
 * load costs a few log lines, not one stack trace per request.
 */
export function watchUpstreams(urls: Record<string, string>, options: WatchOptions = {}): UpstreamHealth {
  const { intervalMs = 10_000, reportEveryMs = 10_000, log, now = Date.now } = options;
  const state: Record<string, Health> = Object.fromEntries(Object.keys(urls).map((k) => [k, "UNKNOWN"]));
  const outages = new Map<string, Outage>();

  const failed = (name: string, error: unknown) => {
    state[name] = "DOWN";
    upstreamUp.set({ upstream: name }, 0);
    const at = now();
    const outage = outages.get(name);
    if (!outage) {
      outages.set(name, { since: at, lastReport: at, unreported: 0, total: 1 });
      log?.warn({ err: error, upstream: name }, `upstream ${name} cannot be reached: ${describe(error)}`);
      return;
    }
    outage.total++;
    outage.unreported++;
    if (at - outage.lastReport >= reportEveryMs) {
      log?.warn(
        { upstream: name, failures: outage.unreported, since: new Date(outage.since).toISOString() },
        `upstream ${name} still cannot be reached: ${outage.unreported} more failures in the last ${Math.round((at - outage.lastReport) / 1000)} s (${describe(error)})`,
      );
      outage.lastReport = at;
      outage.unreported = 0;
    }
  };

  const reached = (name: string) => {
    state[name] = "UP";
    upstreamUp.set({ upstream: name }, 1);
    const outage = outages.get(name);
    if (!outage) return;
    outages.delete(name);
    log?.info(
      { upstream: name, failures: outage.total },
      `upstream ${name} reachable again after ${Math.round((now() - outage.since) / 1000)} s and ${outage.total} failures`,
    );
  };

  const inFlight = new Map<string, Promise<void>>();
  const probeOne = (name: string, url: string): Promise<void> => {
    const running = inFlight.get(name);
    if (running) return running;
    const probing = (async () => {
      try {
        const response = await request(url, { headersTimeout: 3_000, bodyTimeout: 3_000 });
        await response.body.dump();
        if (response.statusCode === 200) reached(name);
        else failed(name, new Error(`health endpoint ${url} answered ${response.statusCode}`));
      } catch (error) {
        failed(name, error);
      } finally {
        inFlight.delete(name);
      }
    })();
    inFlight.set(name, probing);
    return probing;
  };
  const probe = async () => {
    await Promise.all(Object.entries(urls).map(([name, url]) => probeOne(name, url)));
  };
  const current = async (name: string): Promise<Health> => {
    const url = urls[name];
    if (state[name] !== "UP" && url !== undefined) await probeOne(name, url);
    return state[name] ?? "UNKNOWN";
  };
  void probe();
  const timer = setInterval(() => void probe(), intervalMs);
  timer.unref();
  return { snapshot: () => ({ ...state }), failed, reached, current, stop: () => clearInterval(timer) };
}

/**
 * reply-from logs every failed upstream request as a warning with its stack; the outage log above
 * replaces those lines in the scopes that proxy (a Proxy keeps every other logger call as it is).
 */
export function withoutPerRequestUpstreamErrors(log: FastifyBaseLogger): FastifyBaseLogger {
  return new Proxy(log, {
    get(target, property) {
      if (property === "warn") {
        return (first: unknown, message?: unknown, ...rest: unknown[]) => {
          if (message === "response errored") return;
          (target.warn as (...args: unknown[]) => void)(first, message, ...rest);
        };
      }
      const value = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
