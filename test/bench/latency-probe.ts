/**
 * A latency probe (occurrences-http.bench.ts): one keep-alive connection, requests one after the other at
 * a fixed rate, each timed with performance.now() (autocannon's histogram has a 1 ms resolution, too
 * coarse for a health check answered in a fraction of one). Runs as a process of its own (options as
 * JSON in argv[2], the result as JSON on stdout), so that the client is not a thread of the service's
 * process; as a worker thread (options in workerData), the result is posted to the parent.
 */
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { parentPort, workerData } from "node:worker_threads";
import { Pool } from "undici";

export interface ProbeOptions {
  url: string;
  method: "GET" | "POST";
  headers: Record<string, string>;
  body?: string;
  /** Requests per second (at most: a slower answer delays the next request). */
  rate: number;
  seconds: number;
  /** Every answer body must contain this. */
  expect: string;
}

export interface ProbeResult {
  latenciesMs: number[];
  /** When each request of `latenciesMs` was sent (ms since the epoch). */
  sentAtMs: number[];
  failures: number;
  firstFailure?: string;
}

const options = (workerData ?? JSON.parse(process.argv[2] ?? "{}")) as ProbeOptions;
const url = new URL(options.url);
const pool = new Pool(url.origin, { connections: 1, pipelining: 1 });
const latenciesMs: number[] = [];
const sentAtMs: number[] = [];
let failures = 0;
let firstFailure: string | undefined;
const interval = 1000 / options.rate;
const end = performance.now() + options.seconds * 1000;
let next = performance.now();
while (performance.now() < end) {
  const started = performance.now();
  try {
    const response = await pool.request({
      path: url.pathname + url.search,
      method: options.method,
      headers: options.headers,
      ...(options.body ? { body: options.body } : {}),
    });
    const text = await response.body.text();
    const took = performance.now() - started;
    if (response.statusCode >= 300 || !text.includes(options.expect)) {
      failures++;
      firstFailure ??= `HTTP ${response.statusCode}: ${text.slice(0, 200)}`;
    } else {
      latenciesMs.push(took);
      sentAtMs.push(performance.timeOrigin + started);
    }
  } catch (error) {
    failures++;
    firstFailure ??= (error as Error).message;
  }
  next += interval;
  const wait = next - performance.now();
  if (wait > 0) await sleep(wait);
  else next = performance.now();
}
await pool.close();
const result: ProbeResult = { latenciesMs, sentAtMs, failures, ...(firstFailure ? { firstFailure } : {}) };
if (parentPort) parentPort.postMessage(result);
else process.stdout.write(`${JSON.stringify(result)}\n`);
