/**
 * autocannon's `setupClient` for the gateway benchmark's soak (gateway.bench.ts): runs in autocannon's
 * worker thread (which `require`s it, hence CommonJS) and sends every answer's time, latency and
 * connection back to the bench's main thread over a BroadcastChannel, in batches. autocannon's own
 * result has no per-connection figures, and those show who waited (a connection accepted late, a
 * connection starved under load).
 */
"use strict";
const { BroadcastChannel } = require("node:worker_threads");

const channel = new BroadcastChannel("imaging-bench-soak-trace");
channel.unref();
let connections = 0;
/** Flat triples: epoch ms of the answer, latency ms, connection index. */
let batch = [];

function flush() {
  if (batch.length === 0) return;
  channel.postMessage(Float64Array.from(batch));
  batch = [];
}

module.exports = function setupClient(client) {
  const index = connections++;
  client.on("response", (_status, _bytes, latencyMs) => {
    batch.push(Date.now(), latencyMs, index);
    if (batch.length >= 3 * 1024) flush();
  });
  // autocannon destroys every client at the end of the run: the last batch goes then.
  const destroy = client.destroy.bind(client);
  client.destroy = (...args) => {
    flush();
    return destroy(...args);
  };
};
