/** Worker thread of the JavaScript extraction: extracts the batches of files it is sent, in order. */
import { parentPort, workerData } from "node:worker_threads";
import { extractFile } from "./sources.ts";

const { root } = workerData as { root: string };
parentPort?.on("message", (files: string[]) => {
  parentPort?.postMessage(files.map((file) => extractFile(root, file)));
});
