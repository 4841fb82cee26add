/**
 * The CPU priority of a thread that does bulk work beside the event loop (the SQLite readers): it must
 * give a core up the moment the event loop (gateway, identity provider, MCP servers) wants one.
 *
 * A nice value is not enough on Linux: with EEVDF, a thread that wakes does not preempt a running one of
 * lower weight until the running one's slice ends, which the 250 Hz tick can notice up to 4 ms late, and
 * a probe's round trip wakes the event loop several times (docs/benchmarks.md, "Isolation"). A SCHED_IDLE
 * thread is preempted as soon as a normal thread of its group wakes. Linux threads have their own
 * scheduling policy; Node.js has no call for it, so util-linux's `chrt` sets it on this thread's id.
 * Lowering one's own policy needs no privilege. Where it fails (no `chrt`, not Linux), the thread
 * falls back to a nice value below normal (10), which at least shares the CPU in the event loop's favour.
 */
import { spawnSync } from "node:child_process";
import { readlinkSync } from "node:fs";
import { constants, setPriority } from "node:os";

/** What this thread runs at now. */
export type ThreadPriority = "idle" | "nice" | "normal";

/** Linux's SCHED_IDLE policy number (the `policy` field of /proc/<pid>/task/<tid>/stat). */
export const SCHED_IDLE = 5;

/** Moves the calling thread below every normal thread; says what it achieved. Never throws. */
export function yieldCpuToEventLoop(): ThreadPriority {
  const tid = ownThreadId();
  if (tid !== undefined) {
    const chrt = spawnSync("chrt", ["--idle", "--pid", "0", String(tid)], {
      stdio: "ignore",
      timeout: 5_000,
    });
    if (chrt.status === 0) return "idle";
  }
  try {
    // On Linux this is the calling thread's nice value (per thread), not the whole process's.
    setPriority(constants.priority.PRIORITY_BELOW_NORMAL);
    return "nice";
  } catch {
    return "normal";
  }
}

/** This thread's kernel id (Linux: /proc/thread-self points at /proc/<pid>/task/<tid>). */
function ownThreadId(): number | undefined {
  try {
    const tid = Number(readlinkSync("/proc/thread-self").split("/").at(-1));
    return Number.isInteger(tid) && tid > 0 ? tid : undefined;
  } catch {
    return undefined;
  }
}
