/**
 * What the process-level benchmarks (gateway, mcp, sign-in) share: their knobs, the CPU accounting they
 * read from /proc (and the kernel's listen queues), a clean environment for the service processes they start, and the rewrite of their
 * results section in docs/benchmarks.md.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { settingList } from "../../src/config/settings.ts";

/** An integer setting from the environment, at least `min`; `fallback` when unset. */
export const knob = (name: string, fallback: number, min = 0): number => {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be an integer >= ${min}`);
  return value;
};

/**
 * A duration in seconds from the environment, a positive number (fractions allowed: the test suite's tiny
 * runs load for a fraction of a second, which still sends hundreds of requests through every path);
 * `fallback` when unset. With `zeroSkips`, 0 is allowed (the phase is skipped).
 */
export const secondsKnob = (name: string, fallback: number, zeroSkips = false): number => {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0 || (value === 0 && !zeroSkips))
    throw new Error(`${name} must be a number of seconds ${zeroSkips ? ">= 0" : "> 0"}`);
  return value;
};

/**
 * autocannon's options for a run of `seconds`: autocannon ends a run at its next sampling tick (every
 * `sampleInt` ms, 1000 by default), so a run of less than a second would last a whole one; it samples at
 * the run's own length then. Per-sample statistics (requests.average, throughput.average) are per sample,
 * not per second, in that case: the benchmarks divide totals by the run's duration.
 */
export const cannonDuration = (seconds: number): { duration: number; sampleInt?: number } => ({
  duration: seconds,
  ...(seconds < 1 ? { sampleInt: Math.max(1, Math.round(seconds * 1000)) } : {}),
});

export const round = (n: number, digits = 2): number => Math.round(n * 10 ** digits) / 10 ** digits;
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Whether `exited` settles within `ms`. Its timer is cleared when the child exits in time: a bare
 * `sleep(ms)` in a race stays pending and keeps the benchmark's process alive for the rest of the `ms`.
 */
export async function exitedWithin(exited: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      exited.then(() => true),
      new Promise<boolean>((r) => {
        timer = setTimeout(() => r(false), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Kernel clock ticks per second, the unit of /proc's CPU times. */
export const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** User + system CPU seconds of a process so far. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

/**
 * CPU time of a process in seconds, from its threads' schedstat (nanoseconds), for short runs. /proc/<pid>/stat counts in
 * clock ticks of 10 ms, and nginx serving a tiny run's few hundred requests may not use one, which left
 * nginx at 0 and every "÷ nginx" undefined; the threads' sum misses only threads that ended meanwhile.
 */
export function threadCpuSeconds(pid: number): number {
  let nanoseconds = 0;
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      try {
        nanoseconds += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ")[0]);
      } catch {
        // the thread ended meanwhile
      }
    }
  } catch {
    return 0;
  }
  return nanoseconds / 1e9;
}

/** Busy CPU seconds of the whole machine so far (all cores). */
export function machineBusySeconds(): number {
  const line = readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "";
  // cpu user nice system idle iowait irq softirq steal guest guest_nice (guest time is inside user)
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = line
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  return (user + nice + system + irq + softirq + steal) / CLOCK_TICKS;
}

/** This environment without the service's settings (so a developer's own ones cannot skew a run), plus `extra`. */
export function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const setting of settingList) delete env[setting.env];
  delete env.IMAGING_CONFIG;
  delete env.NODE_OPTIONS;
  return { ...env, ...extra };
}

/**
 * Replaces the results between `<!-- bench:NAME:results:start -->` and its end marker in `docsFile`, or
 * appends them under a `## heading` section when the markers are not there yet.
 */
export function writeResultsSection(docsFile: string, name: string, heading: string, results: string): void {
  const start = `<!-- bench:${name}:results:start -->`;
  const end = `<!-- bench:${name}:results:end -->`;
  let text = readFileSync(docsFile, "utf8");
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  const block = `${start}\n${results}\n${end}`;
  text =
    from >= 0 && to > from
      ? text.slice(0, from) + block + text.slice(to + end.length)
      : `${text.replace(/\n*$/, "\n")}\n## ${heading}\n\n${block}\n`;
  writeFileSync(docsFile, text);
}

/** The kernel's TCP listen-queue counters (this network namespace): a dropped SYN costs the client 1 s+. */
export function listenDrops(): { overflows: number; drops: number; synRetransmits: number } {
  const text = readFileSync("/proc/net/netstat", "utf8").split("\n");
  const counters = new Map<string, number>();
  for (let i = 0; i + 1 < text.length; i += 2) {
    const names = (text[i] ?? "").split(/\s+/);
    const values = (text[i + 1] ?? "").split(/\s+/);
    names.forEach((name, j) => {
      if (j > 0) counters.set(name, Number(values[j]));
    });
  }
  return {
    overflows: counters.get("ListenOverflows") ?? 0,
    drops: counters.get("ListenDrops") ?? 0,
    synRetransmits: counters.get("TCPSynRetrans") ?? 0,
  };
}

/**
 * The longest accept queue of a listening port (connections the kernel completed that the process has
 * not accepted yet), from /proc/net/tcp and /proc/net/tcp6: rx_queue of the LISTEN (0A) entry.
 */
export function acceptQueue(port: number): number {
  let longest = 0;
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text = "";
    try {
      text = readFileSync(file, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields[3] !== "0A" || Number.parseInt(fields[1]?.split(":")[1] ?? "", 16) !== port) continue;
      longest = Math.max(longest, Number.parseInt(fields[4]?.split(":")[1] ?? "0", 16));
    }
  }
  return longest;
}
