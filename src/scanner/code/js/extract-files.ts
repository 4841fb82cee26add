/**
 * Extracts many files: in this thread for a small input, else on worker threads (one per core, up to
 * four) pulling batches, so both cores of a small machine parse while the main thread only collects.
 */
import { statSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import type { FileFacts } from "./facts.ts";
import { extractFile } from "./sources.ts";

export interface ExtractOptions {
  /** Worker threads to use; default: one per core (at most 4) when the input is large, else none. */
  workers?: number;
}

/** Below this many bytes of source, starting workers (~50 ms each) costs more than it saves. */
const WORKER_THRESHOLD_BYTES = 2 * 1024 * 1024;
const BATCH_FILES = 32;

// Source files run as .ts (type stripping) in development and tests, as .js once built.
const WORKER_URL = new URL(
  import.meta.url.endsWith(".ts") ? "./extract-worker.ts" : "./extract-worker.js",
  import.meta.url,
);

export function defaultWorkerCount(root: string, files: readonly string[]): number {
  let bytes = 0;
  for (const file of files) {
    try {
      bytes += statSync(join(root, file)).size;
    } catch {
      // unreadable: reported when extracted
    }
    if (bytes >= WORKER_THRESHOLD_BYTES) return Math.min(availableParallelism(), 4);
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
  const run = (worker: Worker) =>
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
        send();
      });
      worker.once("error", reject);
      worker.once("exit", (code) => {
        if (next < batches.length || results[current] === undefined)
          reject(new Error(`a JavaScript extraction worker stopped (exit code ${code})`));
      });
      send();
    });
  const pool = Array.from(
    { length: Math.min(workers, batches.length) },
    () => new Worker(WORKER_URL, { workerData: { root } }),
  );
  try {
    await Promise.all(pool.map(run));
  } finally {
    await Promise.all(pool.map((worker) => worker.terminate()));
  }
  return results.flat();
}
