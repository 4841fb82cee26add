import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import pg from "pg";
import { createApiKey } from "../../src/domain/api-keys.ts";
import { loadDemo } from "../../src/scanner/demo/load-demo.ts";
import { openStore } from "../../src/store/database.ts";
import { type CimdDocumentServer, startCimdDocumentServer } from "../support/cimd-document-server.ts";
import {
  type FaultRecord,
  type LoadTargets,
  listedKeys,
  REQUEST_TIMEOUT_MS,
  runFaultLoad,
  summary,
} from "../support/fault-load.ts";
import { PIN_HEADER } from "../support/haproxy.ts";
import { seedCimdClient, seedUsers, USERS } from "../support/idp-service.ts";
import { type PostgresServer, SERVICE_ROLE, startPostgresServer } from "../support/postgres-server.ts";
import { callApplications, signInThrough } from "../support/replica-flows.ts";
import { type ReplicaSet, startReplicas } from "../support/replicas.ts";
import { freePort } from "../support/service.ts";
import { createUpgradeBuild, UPGRADE_MIGRATION, type UpgradeBuild } from "../support/upgrade-build.ts";

/**
 * Issue 36: replicas that survive their database and restart unseen. Three real `imaging start`
 * processes (embedded identity provider) behind Debian's HAProxy, configured as deploy/haproxy/haproxy.cfg,
 * on a PostgreSQL server of this test's own (initdb in a temporary directory, its own port: the shared
 * server is never touched), under a mixed load (REST reads with an API key, an occurrences page, MCP
 * tools/call with a signed-in user's token) and a writer. Each fault runs under that load:
 *
 * - the replicas: a graceful restart (SIGTERM), a rolling restart of all three, kill -9, and a rolling
 *   upgrade to a build with a new migration (then one replica rolled back): no request may fail, but
 *   those in flight on the killed one;
 * - the database: restart (fast and immediate), its connections killed (pg_terminate_backend), the server
 *   paused (SIGSTOP), every connection slot taken, and a failover to a promoted standby through the
 *   replicas' multi-host URL (target_session_attrs=read-write): no process dies, a failing request is a
 *   503 with Retry-After (MCP: a JSON-RPC error), answered in bounded time, and none fails 5 s after the
 *   database is back.
 *
 * After each, every acknowledged write is read back through every replica. The figures of each run go to
 * stderr and test-artifacts/replica-faults.md (docs/deployment.md, "Faults under load").
 * REPLICA_FAULT_CLIENTS (default 9) and REPLICA_FAULT_HOLD (seconds a fault lasts, default 5) raise the
 * load and the outages for a heavier run.
 */
const DEMO_APPLICATIONS = ["claims-portal", "payments-service", "storefront-web"];
const REDIRECT = "http://127.0.0.1/callback";
const KEY = randomBytes(32).toString("base64");
const PAGE =
  "/rest/applications/payments-service/insights/cve/CVE-2021-44228/occurrences?limit=20&date=2024-03-01T00:00:00Z";
/** How soon after the database is back no request may fail any more (the bound). */
const BACK_WITHIN_MS = 5_000;

const knob = (name: string, fallback: number, min: number) => {
  const value = process.env[name] ? Number(process.env[name]) : fallback;
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be an integer >= ${min}`);
  return value;
};
const CLIENTS = knob("REPLICA_FAULT_CLIENTS", 9, 3);
const HOLD_MS = knob("REPLICA_FAULT_HOLD", 5, 1) * 1000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

describe("replicas behind HAProxy on PostgreSQL, under load, through replica and database faults", {
  timeout: 900_000,
}, () => {
  let server: PostgresServer;
  let standby: PostgresServer | undefined;
  let standbyPort: number;
  let documents: CimdDocumentServer;
  let caDir: string;
  let set: ReplicaSet;
  let build: UpgradeBuild | undefined;
  let targets: LoadTargets;
  const acknowledged = new Set<string>();
  const report: string[] = [];

  before(async () => {
    server = await startPostgresServer();
    // The standby is built for the failover, the last fault; its port is in the replicas' URL from the start.
    standbyPort = await freePort();
    const url = `postgres://${SERVICE_ROLE.user}:${SERVICE_ROLE.password}@127.0.0.1:${server.port},127.0.0.1:${standbyPort}/imaging?target_session_attrs=read-write`;
    documents = await startCimdDocumentServer("/oauth/client-metadata.json", [REDIRECT]);
    caDir = mkdtempSync(join(tmpdir(), "imaging-faults-ca-"));
    writeFileSync(join(caDir, "ca.pem"), documents.ca);
    const handle = await openStore({ databaseUrl: url, sqliteFile: "" });
    let apiKey: string;
    try {
      await loadDemo(handle.db);
      await seedUsers(handle.db);
      await seedCimdClient(handle.db, "lb-client", documents.clientId);
      apiKey = (await createApiKey(handle.db, { user: "fault-admin", role: "admin", applications: [] })).key;
    } finally {
      await handle.close();
    }
    set = await startReplicas({
      count: 3,
      pinnable: true,
      env: {
        DATABASE_URL: url,
        IMAGING_SECRETS_KEY: KEY,
        IDP_EXTRA_CA_FILE: join(caDir, "ca.pem"),
        KEY_POLL_INTERVAL: "1",
        // Short bounds, so that a paused server shows within the test's time: a request waits at most
        // 3 s for a connection, a statement runs at most 4 s (the client gives up 5 s later).
        STORE_WAIT_TIMEOUT: "3",
        STORE_STATEMENT_TIMEOUT: "4",
        // The store's state changes ([store] lines on stderr) and warnings, for the failure messages.
        LOG_LEVEL: "warn",
      },
    });
    const { accessToken } = await signInThrough({
      replica: "a",
      issuer: `${set.base}/auth/realms/imaging`,
      clientId: documents.clientId,
      redirectUri: REDIRECT,
      resource: `${set.base}/mcp`,
      username: "alice",
      password: USERS.alice.password,
    });
    const page = await fetch(`${set.base}${PAGE}`, { headers: { "x-api-key": apiKey } });
    assert.equal(page.status, 200);
    const expected = await page.json();
    assert.ok(Array.isArray(expected) && expected.length > 0, "the page lists affected packages");
    targets = {
      base: set.base,
      apiKey,
      token: accessToken,
      applications: DEMO_APPLICATIONS,
      page: { path: PAGE, expected },
    };
  });

  after(async () => {
    await set?.stop();
    await documents?.close();
    await standby?.destroy();
    await server?.destroy();
    build?.remove();
    if (caDir) rmSync(caDir, { recursive: true, force: true });
    if (report.length > 0) {
      mkdirSync("test-artifacts", { recursive: true });
      writeFileSync(
        join("test-artifacts", "replica-faults.md"),
        [
          `${CLIENTS} clients + 1 writer through HAProxy, faults held ${HOLD_MS / 1000} s`,
          "",
          "| fault | requests | failed | of which 503 + Retry-After | slowest answer | last failure after the database was back | writes acknowledged, all found on 3 replicas |",
          "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
          ...report,
          "",
        ].join("\n"),
      );
    }
  });

  /** Every replica still runs, none logged a store fault it did not handle. */
  const assertAllAlive = () => {
    for (const replica of set.replicas) {
      assert.equal(
        replica.child.exitCode,
        null,
        `replica ${replica.name} exited: ${replica.stderr().slice(-2000)}`,
      );
      assert.equal(replica.child.signalCode, null, `replica ${replica.name} was killed`);
      assert.doesNotMatch(
        replica.stderr(),
        /\[bug\]|UnhandledPromiseRejection|uncaughtException|ERR_UNHANDLED/,
        `replica ${replica.name}`,
      );
    }
  };

  /** Every write acknowledged so far is listed by every replica. */
  const assertWritesEverywhere = async (records: readonly FaultRecord[]) => {
    for (const record of records) if (record.created) acknowledged.add(record.created);
    for (const replica of set.replicas) {
      const listed = await listedKeys(set.base, targets.apiKey, replica.name);
      const missing = [...acknowledged].filter((id) => !listed.has(id));
      assert.deepEqual(missing, [], `acknowledged writes replica ${replica.name} does not have`);
    }
  };

  const describeFailures = (records: readonly FaultRecord[], from: number) =>
    records
      .filter((r) => !r.ok)
      .slice(0, 6)
      .map((r) => `${r.kind} ${r.start - from}..${r.end - from} ms: ${r.reason}`)
      .join("\n  ");

  const haproxyLog = () => `\nHAProxy's log:\n${set.haproxy.log().split("\n").slice(-30).join("\n")}`;

  const record = (fault: string, records: readonly FaultRecord[], lastFailureAfterBack: string) => {
    const failed = records.filter((r) => !r.ok);
    const slowest = Math.max(...records.map((r) => r.end - r.start));
    const writes = records.filter((r) => r.created).length;
    report.push(
      `| ${fault} | ${records.length} | ${failed.length} | ${failed.filter((r) => r.clean).length} | ${(slowest / 1000).toFixed(1)} s | ${lastFailureAfterBack} | ${writes} |`,
    );
    process.stderr.write(`[faults] ${fault}: ${summary(records)}; slowest ${slowest} ms\n`);
  };

  /** A fault of the replicas themselves: not one request may fail. */
  async function replicaFault(fault: string, during: (startedAt: number) => Promise<void>) {
    const { records, duringError } = await runFaultLoad({ targets, clients: CLIENTS, seconds: 4, during });
    assert.equal(duringError, undefined, `the fault went through: ${duringError}`);
    const t0 = records[0]?.start ?? 0;
    assert.deepEqual(
      records.filter((r) => !r.ok).length,
      0,
      `failed requests:\n  ${describeFailures(records, t0)}${haproxyLog()}`,
    );
    assert.ok(records.length > CLIENTS * 3, `the load ran (${records.length} requests)`);
    assertAllAlive();
    await assertWritesEverywhere(records);
    record(fault, records, "-");
  }

  /**
   * A fault of the database: `inject` breaks it and resolves once it accepts connections again. Every
   * failure is a 503 with Retry-After answered in bounded time, none starts 5 s after the database is
   * back, the processes live on.
   */
  async function databaseFault(fault: string, inject: () => Promise<void>) {
    let backAt = 0;
    const { records, duringError } = await runFaultLoad({
      targets,
      clients: CLIENTS,
      seconds: 4,
      during: async (startedAt) => {
        await sleep(startedAt + 2_000 - Date.now());
        await inject();
        backAt = Date.now();
        // The load goes on past the bound in which the service must be back.
        await sleep(BACK_WITHIN_MS + 1_000);
      },
    });
    assert.equal(duringError, undefined, `the fault went through: ${duringError}`);
    const failed = records.filter((r) => !r.ok);
    const unclean = failed.filter((r) => !r.clean);
    assert.deepEqual(
      unclean.length,
      0,
      `failures other than 503 with Retry-After:\n  ${describeFailures(unclean, backAt)}${haproxyLog()}`,
    );
    const late = failed.filter((r) => r.start >= backAt + BACK_WITHIN_MS);
    assert.equal(
      late.length,
      0,
      `failures 5 s after the database was back:\n  ${describeFailures(late, backAt)}`,
    );
    const slowest = Math.max(...records.map((r) => r.end - r.start));
    assert.ok(slowest < REQUEST_TIMEOUT_MS, `a request took ${slowest} ms`);
    for (const kind of ["list", "page", "tool", "write"] as const) {
      assert.ok(
        records.some((r) => r.kind === kind && r.ok && r.start >= backAt + BACK_WITHIN_MS),
        `${kind} requests succeed again once the database is back`,
      );
    }
    assertAllAlive();
    await assertWritesEverywhere(records);
    const lastFailure = Math.max(...failed.map((r) => r.start - backAt), Number.NEGATIVE_INFINITY);
    record(
      fault,
      records,
      failed.length === 0
        ? "none failed"
        : lastFailure < 0
          ? "none (all before)"
          : `${(lastFailure / 1000).toFixed(1)} s`,
    );
  }

  it("a graceful restart (SIGTERM) of a replica under load: no request fails", async () => {
    await replicaFault("graceful restart of one replica", async (startedAt) => {
      await sleep(startedAt + 1_500 - Date.now());
      assert.equal(await set.terminate("b"), 0, "the replica exits 0 after its drain");
      assert.match(set.replicas[1]?.stderr() ?? "", /SIGTERM received: draining for 3 s/);
      await set.restart("b");
      await set.haproxy.waitFor("b", "UP", 30_000);
    });
  });

  it("a rolling restart of the three replicas under load: no request fails", async () => {
    await replicaFault("rolling restart of three replicas", async (startedAt) => {
      await sleep(startedAt + 1_500 - Date.now());
      for (const name of ["a", "b", "c"]) {
        assert.equal(await set.terminate(name), 0);
        await set.restart(name);
        await set.haproxy.waitFor(name, "UP", 30_000);
      }
    });
  });

  it("kill -9 of a replica under load: only its requests in flight fail; it restarts and rejoins", async () => {
    const times = { kill: 0, dead: 0, down: 0 };
    const { records, duringError } = await runFaultLoad({
      targets,
      clients: CLIENTS,
      seconds: 4,
      during: async (startedAt) => {
        await sleep(startedAt + 1_500 - Date.now());
        times.kill = Date.now();
        await set.kill("c");
        times.dead = Date.now();
        await set.haproxy.waitFor("c", "DOWN");
        times.down = Date.now();
        await set.restart("c");
        await set.haproxy.waitFor("c", "UP", 30_000);
      },
    });
    assert.equal(duringError, undefined, `${duringError}`);
    const failed = records.filter((r) => !r.ok);
    const notInFlight = failed.filter((r) => r.start >= times.dead || r.end < times.kill);
    assert.equal(
      notInFlight.length,
      0,
      `not in flight on the killed replica:\n  ${describeFailures(notInFlight, times.kill)}`,
    );
    assert.ok(
      failed.length <= CLIENTS + 1,
      `at most one request per client was in flight on it (${failed.length})`,
    );
    assert.deepEqual(await callApplications(`${set.base}/mcp`, targets.token, { replica: "c" }), {
      ok: true,
      names: DEMO_APPLICATIONS,
    });
    assertAllAlive();
    await assertWritesEverywhere(records);
    record("kill -9 of one replica (then restarted)", records, "-");
  });

  it("PostgreSQL restarted (pg_ctl restart -m fast) under load: no process dies, failures are 503s, back within 5 s", async () => {
    await databaseFault("PostgreSQL restart, fast", () => server.restart("fast"));
  });

  it("PostgreSQL crashed and restarted (-m immediate) under load: the same", async () => {
    await databaseFault("PostgreSQL restart, immediate (crash)", () => server.restart("immediate"));
  });

  it("every connection of the service killed (pg_terminate_backend), twice, under load: the same", async () => {
    await databaseFault("backends killed (pg_terminate_backend)", async () => {
      assert.ok((await server.terminateBackends("imaging")) > 0, "the replicas had connections");
      await sleep(1_000);
      await server.terminateBackends("imaging");
    });
  });

  it("the server paused (SIGSTOP) under load: requests answered 503 in bounded time, none hangs; back after SIGCONT", async () => {
    await databaseFault(`server paused (SIGSTOP) ${HOLD_MS / 1000} s`, async () => {
      server.pause();
      try {
        await sleep(HOLD_MS);
      } finally {
        server.resume();
      }
    });
    // A replica that needed a new connection during the pause said why, and that the database came back
    // (one whose queries all waited out the pause on connections it had open has nothing to say).
    const told = set.replicas.filter((r) =>
      /\[store\] database unavailable \(postgres:\/\/imaging@/.test(r.stderr()),
    );
    assert.ok(told.length > 0, "a replica logged the outage");
    for (const replica of told) {
      assert.match(replica.stderr(), /\[store\] database reachable again after/, `replica ${replica.name}`);
    }
    for (const replica of set.replicas) {
      assert.doesNotMatch(replica.stderr(), /imaging:imaging@/, "no password in the log");
    }
  });

  it("every connection slot of the server taken (max_connections) under load: the same", async () => {
    await databaseFault(`max_connections full ${HOLD_MS / 1000} s`, async () => {
      const hogs: pg.Client[] = [];
      try {
        for (;;) {
          const client = new pg.Client({ connectionString: server.url("imaging") });
          try {
            await client.connect();
          } catch (error) {
            assert.equal((error as { code?: string }).code, "53300", `${error}`);
            break;
          }
          hogs.push(client);
          client.on("error", () => {});
        }
        await sleep(HOLD_MS);
      } finally {
        await Promise.all(hogs.map((client) => client.end().catch(() => {})));
      }
    });
  });

  it("a rolling upgrade to a build with a new migration under load, then one replica rolled back: no request fails", async () => {
    build = createUpgradeBuild();
    const upgrade = build;
    await replicaFault("rolling upgrade (new migration), one replica rolled back", async (startedAt) => {
      await sleep(startedAt + 1_500 - Date.now());
      for (const name of ["a", "b", "c"]) {
        assert.equal(await set.terminate(name), 0);
        await set.restart(name, { cli: upgrade.cli });
        await set.haproxy.waitFor(name, "UP", 30_000);
      }
      // The previous build starts on the new schema (a rollback, or an old replica restarting mid-upgrade).
      assert.equal(await set.terminate("c"), 0);
      await set.restart("c");
      await set.haproxy.waitFor("c", "UP", 30_000);
    });
    const applied = set.replicas.filter((r) =>
      r.stderr().includes(`applied migrations: ${UPGRADE_MIGRATION}`),
    );
    assert.equal(applied.length, 1, "one upgraded replica applied the migration");
    assert.match(
      set.replicas[2]?.stderr() ?? "",
      new RegExp(`newer build applied \\(${UPGRADE_MIGRATION}\\)`),
    );
    const admin = new pg.Client({ connectionString: server.url("imaging") });
    await admin.connect();
    try {
      assert.deepEqual((await admin.query("select applied from upgrade_marker")).rows, [{ applied: "once" }]);
    } finally {
      await admin.end();
    }
  });

  it("a failover to a promoted standby (multi-host URL, target_session_attrs=read-write) under load: the same, no acknowledged write lost", async () => {
    // Synchronous: the primary acknowledges a commit once the standby has it, as a failover without loss needs.
    standby = await server.createStandby({ synchronous: true, port: standbyPort });
    const promoted = standby;
    await databaseFault("failover: primary killed, standby promoted", async () => {
      await server.stop("immediate");
      await sleep(1_000);
      await promoted.promote();
    });
    assert.ok(await promoted.isPrimary());
    // Every replica now writes to the promoted server.
    const pinned = await fetch(`${set.base}/rest/admin/api-keys`, {
      method: "POST",
      headers: { "x-api-key": targets.apiKey, "content-type": "application/json", [PIN_HEADER]: "a" },
      body: JSON.stringify({ user: "after-failover", role: "viewer" }),
    });
    assert.equal(pinned.status, 201);
  });
});
