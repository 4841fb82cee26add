import assert from "node:assert/strict";
import { callApplications, type LoadRecord, runLoad } from "./replica-flows.ts";
import type { ReplicaSet } from "./replicas.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The load: 200 clients for 60 s. REPLICA_LOAD_CLIENTS / REPLICA_LOAD_SECONDS lower it on a
 * developer's machine (never below 20 s: the kill, the health check and the restart must fit).
 */
export function loadKnobs(): { clients: number; seconds: number } {
  const read = (name: string, fallback: number, min: number) => {
    const raw = process.env[name];
    const value = raw ? Number(raw) : fallback;
    if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be an integer >= ${min}`);
    return value;
  };
  return { clients: read("REPLICA_LOAD_CLIENTS", 200, 1), seconds: read("REPLICA_LOAD_SECONDS", 60, 20) };
}

/**
 * `clients` concurrent clients send tools/call through HAProxy for `seconds`; at a quarter of the run
 * `victim` is killed with SIGKILL, HAProxy's health check takes it out, at 40 % it is started again
 * and the check brings it back. What must hold: a request that failed was in flight when the kill came
 * (started before the victim's exit was seen, ended after the signal); none started after HAProxy marked the victim down failed; every
 * answer names the expected applications; the restarted replica serves again.
 */
export async function killUnderLoad(
  set: ReplicaSet,
  options: { token: string; expected: string[]; victim: string; clients: number; seconds: number },
): Promise<void> {
  const times = { kill: 0, dead: 0, down: 0, restart: 0, up: 0 };
  const { records, duringError } = await runLoad({
    url: `${set.base}/mcp`,
    token: options.token,
    clients: options.clients,
    seconds: options.seconds,
    expected: options.expected,
    during: async (startedAt) => {
      await sleep(startedAt + options.seconds * 250 - Date.now());
      times.kill = Date.now();
      await set.kill(options.victim);
      // The process is dead by the time its exit is seen; between the signal and then it may still have
      // taken requests, so those count as in flight on it.
      times.dead = Date.now();
      await set.haproxy.waitFor(options.victim, "DOWN");
      times.down = Date.now();
      await sleep(startedAt + options.seconds * 400 - Date.now());
      times.restart = Date.now();
      await set.restart(options.victim);
      await set.haproxy.waitFor(options.victim, "UP", 30_000);
      times.up = Date.now();
    },
  });
  assert.equal(duringError, undefined, `the kill and restart went through: ${duringError}`);
  const failed = records.filter((r) => !r.ok);
  const describe = (list: LoadRecord[]) =>
    list
      .slice(0, 5)
      .map((r) => `${r.start - times.kill} ms..${r.end - times.kill} ms after the kill: ${r.reason}`)
      .join("; ");
  const notInFlight = failed.filter((r) => r.start >= times.dead || r.end < times.kill);
  const haproxyLog = () =>
    `\nHAProxy's log (state changes, failed requests):\n${set.haproxy.log().split("\n").slice(0, 40).join("\n")}`;
  assert.deepEqual(
    notInFlight.length,
    0,
    `requests not in flight on the killed replica failed (${notInFlight.length}): ${describe(notInFlight)}${haproxyLog()}`,
  );
  const afterDown = failed.filter((r) => r.start >= times.down);
  assert.equal(afterDown.length, 0, `errors after HAProxy removed it: ${describe(afterDown)}${haproxyLog()}`);
  assert.ok(
    failed.length <= options.clients,
    `at most one request per client can have been in flight on it (${failed.length} failed)`,
  );
  const afterUp = records.filter((r) => r.start >= times.up);
  assert.ok(afterUp.length > 0, "the load went on after the replica rejoined");
  assert.ok(
    records.length > options.clients * 2,
    `the load ran (${records.length} requests for ${options.clients} clients)`,
  );
  // Rejoined: HAProxy sends it requests again, and it answers them.
  assert.deepEqual(await callApplications(`${set.base}/mcp`, options.token, { replica: options.victim }), {
    ok: true,
    names: [...options.expected].sort(),
  });
  process.stderr.write(
    `[replicas] ${records.length} requests by ${options.clients} clients in ${options.seconds} s; ` +
      `${failed.length} failed (in flight on ${options.victim} at the kill); ` +
      `dead ${times.dead - times.kill} ms after the signal, down in HAProxy after ${times.down - times.kill} ms, back ${times.up - times.restart} ms after its restart; ` +
      `${afterUp.length} requests after it rejoined\n`,
  );
}
