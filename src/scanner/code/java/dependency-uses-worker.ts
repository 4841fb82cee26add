/** Worker thread: dependencyUses over a slice of the class files (see extract.ts). */
import { parentPort, workerData } from "node:worker_threads";
import { dependencyUses } from "./dependency-uses.ts";

interface Job {
  dependencyClasses: string[];
  labels: string[];
  /** Offsets of each class file in `buffer`, plus the end. */
  offsets: number[];
  buffer: ArrayBuffer;
}

const job = workerData as Job;
const bytes = new Uint8Array(job.buffer);
const files = job.labels.map((label, i) => ({
  label,
  bytes: bytes.subarray(job.offsets[i] as number, job.offsets[i + 1] as number),
}));
parentPort?.postMessage(dependencyUses(files, new Set(job.dependencyClasses)));
