/**
 * Where a request through the gateway's HTTP hop waits (issue 18, point 5): preloaded into the gateway
 * child of `bench:gateway` (BENCH_GATEWAY_QUEUE_TRACE=<dir>; the bench adds `--import` of this file), it
 * times every request the gateway sends through an undici Pool in two parts:
 * - queue: from the gateway's dispatch to undici writing the request on an upstream connection (the wait
 *   in the pool's queue for a free connection, and a connection's set-up);
 * - upstream: from that write to the upstream's response headers (the MCP server's own queueing and work).
 * Both are written at exit as JSON ({ queue: ms[], upstream: ms[], at: ms[] }, `at` = epoch ms of the
 * headers) to <dir>/upstream-queue-<pid>.json. Bench-only: nothing of the service loads it.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Pool } from "undici";

const dir = process.env.BENCH_GATEWAY_QUEUE_TRACE;
if (dir) {
  const queue: number[] = [];
  const upstream: number[] = [];
  const at: number[] = [];
  type Handler = {
    onRequestStart?: (...args: unknown[]) => unknown;
    onResponseStart?: (...args: unknown[]) => unknown;
  };
  const dispatch = Pool.prototype.dispatch;
  Pool.prototype.dispatch = function traced(this: Pool, options, handler) {
    const h = handler as Handler;
    const dispatched = performance.now();
    let written = Number.NaN;
    const start = h.onRequestStart;
    const response = h.onResponseStart;
    if (start && response) {
      h.onRequestStart = function (this: unknown, ...args: unknown[]) {
        written = performance.now();
        return start.apply(this, args);
      };
      h.onResponseStart = function (this: unknown, ...args: unknown[]) {
        if ((args[1] as number) >= 200 && Number.isFinite(written)) {
          const now = performance.now();
          queue.push(written - dispatched);
          upstream.push(now - written);
          at.push(Date.now());
        }
        return response.apply(this, args);
      };
    }
    return dispatch.call(this, options, handler);
  } as Pool["dispatch"];
  process.once("exit", () => {
    writeFileSync(join(dir, `upstream-queue-${process.pid}.json`), JSON.stringify({ queue, upstream, at }));
  });
}
