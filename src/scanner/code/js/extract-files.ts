/**
 * Extracts many files: in this thread for a small input, else also on worker threads (one per idle extra
 * core, up to three) pulling batches from the same queue, so a 2-core machine parses on both cores while
 * paying one extra JIT warm-up and parser start rather than two.
 */
import { statSync } from "node:fs";
import { availableParallelism, loadavg } from "node:os";
import { join } from "node:path";
import { setImmediate as yieldToEvents } from "node:timers/promises";
import { Worker } from "node:worker_threads";
import type { FileFacts } from "./facts.ts";
import { extractFile } from "./sources.ts";

export interface ExtractOptions {
  /** Worker threads besides this one; default: one per extra core (at most 3) when the input is large. */
  workers?: number;
}

/** Below this many bytes of source, a worker's start (~50 ms plus its JIT warm-up) costs more than it saves. */
const WORKER_THRESHOLD_BYTES = 4 * 1024 * 1024;
const BATCH_FILES = 32;

// Source files run as .ts (type stripping) in development and tests, as .js once built.
const WORKER_URL = new URL(
  import.meta.url.endsWith(".ts") ? "./extract-worker.ts" : "./extract-worker.js",
  import.meta.url,
);

/**
 * Worker threads for extracting `files`: none for a small input, else one per extra core (at most 3) that
 * is idle. A worker costs a third more CPU in all (its start, its own JIT warm-up, copying the facts
 * back), which only pays when a core would otherwise sit idle: on a machine whose load already fills
 * every core, the threads would only compete with each other (measured in docs/benchmarks.md).
 */
export function defaultWorkerCount(
  root: string,
  files: readonly string[],
  machine: { cores: number; load: number } = { cores: availableParallelism(), load: loadavg()[0] ?? 0 },
): number {
  if (files.length <= BATCH_FILES) return 0;
  const idle = Math.floor(machine.cores - machine.load);
  const wanted = Math.min(machine.cores - 1, idle, 3);
  if (wanted < 1) return 0;
  let bytes = 0;
  for (const file of files) {
    try {
      bytes += statSync(join(root, file)).size;
    } catch {
      // unreadable: reported when extracted
    }
    if (bytes >= WORKER_THRESHOLD_BYTES) return wanted;
  }
  return 0;
}

export async function extractFiles(
  root: string,
  files: readonly string[],
  options: ExtractOptions = {},
): Promise<FileFacts[]> {
  const workers = options.workers ?? defaultWorkerCount(root, files);
  if (workers <= 0 || files.length <= BATCH_FILES) return files.map((file) => extractFile(root, file));
  const batches: string[][] = [];
  for (let i = 0; i < files.length; i += BATCH_FILES) batches.push(files.slice(i, i + BATCH_FILES));
  const results: FileFacts[][] = new Array(batches.length);
  let next = 0;
  const runWorker = (worker: Worker) =>
    new Promise<void>((resolve, reject) => {
      let current = -1;
      const send = () => {
        if (next >= batches.length) {
          resolve();
          return;
        }
        current = next++;
        worker.postMessage(batches[current]);
      };
      worker.on("message", (facts: FileFacts[]) => {
        results[current] = facts;
        current = -1;
        send();
      });
      worker.once("error", reject);
      worker.once("exit", (code) => {
        if (current >= 0) reject(new Error(`a JavaScript extraction worker stopped (exit code ${code})`));
      });
      send();
    });
  // This thread takes batches too, yielding between them so the workers' answers are collected.
  const runHere = async () => {
    while (next < batches.length) {
      const current = next++;
      results[current] = (batches[current] as string[]).map((file) => extractFile(root, file));
      await yieldToEvents();
    }
  };
  const pool = Array.from(
    { length: Math.min(workers, batches.length - 1) },
    () => new Worker(WORKER_URL, { workerData: { root } }),
  );
  try {
    await Promise.all([...pool.map(runWorker), runHere()]);
  } finally {
    await Promise.all(pool.map((worker) => worker.terminate()));
  }
  return results.flat();
}
