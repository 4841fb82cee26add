/** Runs one fuzz target on one input in a worker thread (see test/unit/fuzz-regressions.test.ts). */
import { readFileSync } from "node:fs";
import { parentPort, workerData } from "node:worker_threads";

const { target, input } = workerData as { target: string; input: string };
const { fuzz } = (await import(new URL(`./targets/${target}.ts`, import.meta.url).href)) as {
  fuzz(data: Buffer): unknown;
};
try {
  await fuzz(readFileSync(input));
  parentPort?.postMessage({ ok: true });
} catch (error) {
  parentPort?.postMessage({
    ok: false,
    error: error instanceof Error ? (error.stack ?? error.message) : String(error),
  });
}
