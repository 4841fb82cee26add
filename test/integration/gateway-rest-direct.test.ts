import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { once } from "node:events";
import type { IncomingMessage, Server } from "node:http";
import { connect } from "node:net";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { createApiKey } from "../../src/domain/api-keys.ts";
import type { RunningService } from "../../src/service.ts";
import { openStore } from "../../src/store/database.ts";
import { spawnService } from "../support/cli.ts";
import { rawRequest, withoutDate } from "../support/raw-http.ts";
import { startTestService } from "../support/service.ts";
import { createTestStore, STORE_KINDS, type TestStore } from "../support/stores.ts";
import { seedWide, WIDE } from "../support/wide-cve.ts";

for (const kind of STORE_KINDS) {
  describe(`the REST API in the gateway's process answers /rest on the client's connection, on ${kind}`, () => {
    let store: TestStore;
    /** Every part in one process: the gateway hands /rest to the REST application's request listener. */
    let oneProcess: RunningService;
    /** A gateway alone, forwarding to the same REST API over HTTP (as with `--only gateway`). */
    let overHttp: RunningService;
    let key: string;
    /** Paths the REST API's listener received over a socket (HTTP servers of this process). */
    const receivedByRestListener: string[] = [];
    const onServerRequest = (message: unknown) => {
      const { request: received, server } = message as { request: IncomingMessage; server: Server };
      const address = server.address();
      if (typeof address !== "object" || address === null || !oneProcess) return;
      if (String(address.port) === new URL(oneProcess.restUrl).port) {
        receivedByRestListener.push(received.url ?? "");
      }
    };
    /** What the REST listener received over a socket apart from the gateways' health probes. */
    const restListenerRequests = () => receivedByRestListener.filter((url) => url !== "/rest/health");

    before(async () => {
      store = await createTestStore(kind);
      oneProcess = await startTestService(store, {}, (handle) => seedWide(handle.db));
      overHttp = await startTestService(
        store,
        {
          restUpstreamUrl: oneProcess.restUrl,
          mcpAnalysisUpstreamUrl: oneProcess.mcpUrls.analysis,
          mcpGatekeeperUpstreamUrl: oneProcess.mcpUrls.gatekeeper,
        },
        undefined,
        ["gateway"],
      );
      key = (await createApiKey(oneProcess.store.db, { user: "in-process", role: "admin", applications: [] }))
        .key;
      subscribe("http.server.request.start", onServerRequest);
    });
    after(async () => {
      unsubscribe("http.server.request.start", onServerRequest);
      await overHttp?.stop();
      await oneProcess?.stop();
      await store?.drop();
    });

    /** The same request through both gateways: what reached the REST listener over a socket, each way. */
    async function bothWays(
      path: string,
      headers: Record<string, string>,
      method = "GET",
      body?: string | Buffer,
    ) {
      receivedByRestListener.length = 0;
      const inProcess = await rawRequest(`${oneProcess.gatewayUrl}${path}`, headers, method, body);
      const socketsInProcess = restListenerRequests();
      receivedByRestListener.length = 0;
      const http = await rawRequest(`${overHttp.gatewayUrl}${path}`, headers, method, body);
      const socketsOverHttp = restListenerRequests();
      return { inProcess, http, socketsInProcess, socketsOverHttp };
    }

    const page = `/rest/applications/${WIDE.app}/insights/cve/${WIDE.cve}/occurrences?limit=${WIDE.packages}`;

    for (const encoding of ["identity", "br", "gzip"]) {
      it(`serves the wide page (${encoding}) without a loopback request, with the bytes and headers of the HTTP path`, async () => {
        const { inProcess, http, socketsInProcess, socketsOverHttp } = await bothWays(page, {
          "X-API-KEY": key,
          "Accept-Encoding": encoding,
        });
        assert.deepEqual(
          socketsInProcess,
          [],
          "the one-process gateway made no HTTP request to the REST API",
        );
        assert.deepEqual(socketsOverHttp, [page], "the other gateway reached the REST API over HTTP");
        assert.equal(inProcess.status, 200);
        assert.deepEqual(withoutDate(inProcess.headers), withoutDate(http.headers));
        assert.equal(inProcess.headers["content-encoding"], encoding === "identity" ? undefined : encoding);
        if (encoding !== "identity") assert.match(String(inProcess.headers.vary), /accept-encoding/i);
        assert.ok(inProcess.body.length > (encoding === "identity" ? 256 * 1024 : 1024));
        assert.ok(inProcess.body.equals(http.body), "the same bytes on the wire");
      });
    }

    it("streams a schema-serialized page in pieces the same way (chunked, no length)", async () => {
      const { inProcess, http, socketsInProcess } = await bothWays(
        `/rest/applications/${WIDE.app}/objects?q=fn&limit=1000`,
        { "X-API-KEY": key },
      );
      assert.deepEqual(socketsInProcess, []);
      assert.equal(inProcess.status, 200);
      assert.equal(inProcess.headers["transfer-encoding"], "chunked");
      assert.deepEqual(withoutDate(inProcess.headers), withoutDate(http.headers));
      assert.equal((JSON.parse(inProcess.body.toString("utf8")) as unknown[]).length, 1000);
      assert.ok(inProcess.body.equals(http.body));
    });

    it("takes a body to the REST API: an API key it creates, the same answer as over HTTP", async () => {
      const create = (user: string) => JSON.stringify({ user, role: "viewer", applications: [WIDE.app] });
      const { inProcess, http, socketsInProcess } = await bothWays(
        "/rest/admin/api-keys",
        { "X-API-KEY": key, "Content-Type": "application/json" },
        "POST",
        create("direct-path"),
      );
      assert.deepEqual(socketsInProcess, []);
      assert.equal(inProcess.status, 201, inProcess.body.toString("utf8"));
      assert.equal(http.status, 201, http.body.toString("utf8"));
      const created = JSON.parse(inProcess.body.toString("utf8")) as { user: string };
      assert.equal(created.user, "direct-path");
    });

    it("413 from the gateway for a body over its limit, as over HTTP", async () => {
      const { inProcess, http, socketsInProcess } = await bothWays(
        "/rest/gates/no-unfixable-vulnerability",
        { "X-API-KEY": key, "Content-Type": "application/json" },
        "PUT",
        Buffer.alloc(5 * 1024 * 1024, " "),
      );
      assert.deepEqual(socketsInProcess, []);
      assert.equal(inProcess.status, 413);
      assert.deepEqual(withoutDate(inProcess.headers), withoutDate(http.headers));
      assert.deepEqual(JSON.parse(inProcess.body.toString("utf8")), JSON.parse(http.body.toString("utf8")));
    });

    it("a client that goes away mid-page: the page is not written further, the next one is whole", async () => {
      const port = Number(new URL(oneProcess.gatewayUrl).port);
      const socket = connect(port, "127.0.0.1");
      socket.write(`GET ${page} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-KEY: ${key}\r\n\r\n`);
      // The head and the first bytes of the page arrived: the client leaves.
      await once(socket, "data");
      socket.destroy();
      await once(socket, "close");
      const { inProcess, http } = await bothWays(page, { "X-API-KEY": key });
      assert.equal(inProcess.status, 200);
      assert.ok(inProcess.body.equals(http.body));
      const health = (await (await fetch(`${oneProcess.gatewayUrl}/mcp/healthcheck`)).json()) as {
        details: { upstreams: Record<string, string> };
      };
      assert.equal(health.details.upstreams.rest, "UP");
    });

    it("answers the REST API's refusals the same: 401 with its challenge, 400 for a body that is no JSON, 415 for one without a type, 405 with Allow", async () => {
      for (const [path, headers, method, body, status] of [
        [page, {}, "GET", undefined, 401],
        [
          `/rest/applications/${WIDE.app}/analyses`,
          { "X-API-KEY": key, "Content-Type": "application/json" },
          "POST",
          "{not json",
          400,
        ],
        // A body without Content-Type: the REST API answers it as application/octet-stream, both ways.
        [`/rest/applications/${WIDE.app}/analyses`, { "X-API-KEY": key }, "POST", "a,b", 415],
        [`/rest/applications/${WIDE.app}`, { "X-API-KEY": key }, "PATCH", undefined, 405],
      ] as const) {
        const { inProcess, http, socketsInProcess } = await bothWays(path, headers, method, body);
        assert.deepEqual(socketsInProcess, [], `${method} ${path}`);
        assert.equal(inProcess.status, status, `${method} ${path}: ${inProcess.body}`);
        assert.match(String(inProcess.headers["content-type"]), /^application\/problem\+json/);
        assert.deepEqual(withoutDate(inProcess.headers), withoutDate(http.headers), `${method} ${path}`);
        assert.deepEqual(JSON.parse(inProcess.body.toString("utf8")), JSON.parse(http.body.toString("utf8")));
      }
    });
  });
}

interface LogLine {
  reqId?: string;
  msg: string;
  req?: { url: string; remotePort?: number };
  res?: { statusCode: number };
}

/** The JSON log lines of a request id, once `count` of them are written (bounded wait). */
async function linesOf(read: () => string, id: string, count: number): Promise<LogLine[]> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const lines = read()
      .split("\n")
      .filter((line) => line.startsWith('{"level":'))
      .map((line) => JSON.parse(line) as LogLine)
      .filter((line) => line.reqId === id);
    if (lines.length >= count || Date.now() > deadline) return lines;
    await sleep(50);
  }
}

/**
 * `imaging start` with every part in one process, as an operator reads its log: the request that the
 * REST API answered on the client's own connection has the lines it has in a split deployment
 * (request-logs.test.ts): the gateway's and the REST API's, each "incoming" and "completed", one id.
 */
describe("the direct path's log lines in one `imaging start` process", () => {
  let store: TestStore;
  let service: Awaited<ReturnType<typeof spawnService>>;
  let key: string;

  before(async () => {
    store = await createTestStore("sqlite");
    const handle = await openStore({ sqliteFile: store.sqliteFile });
    try {
      await seedWide(handle.db);
      key = (await createApiKey(handle.db, { user: "direct-logs", role: "admin", applications: [] })).key;
    } finally {
      await handle.close();
    }
    service = await spawnService(["--data-dir", store.dataDir, "--port", "0"], { LOG_LEVEL: "info" });
  });
  after(async () => {
    const child = service?.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      await once(child, "exit");
    }
    await store?.drop();
  });

  it("the gateway's and the REST API's lines carry the client's trace-id; the REST API saw the client's socket", async () => {
    const id = randomBytes(16).toString("hex");
    const path = `/rest/applications/${WIDE.app}/insights/cve/${WIDE.cve}/occurrences?limit=5`;
    const answer = await rawRequest(`${service.summary.gateway}${path}`, {
      "X-API-KEY": key,
      traceparent: `00-${id}-${randomBytes(8).toString("hex")}-01`,
    });
    assert.equal(answer.status, 200);
    const lines = await linesOf(service.stdout, id, 4);
    const incoming = lines.filter((l) => l.msg === "incoming request");
    const completed = lines.filter((l) => l.msg === "request completed");
    assert.equal(incoming.length, 2, JSON.stringify(lines));
    assert.equal(completed.length, 2, JSON.stringify(lines));
    for (const line of incoming) assert.equal(line.req?.url, path);
    for (const line of completed) assert.equal(line.res?.statusCode, 200);
    // Both listeners logged the client's own connection: no loopback request to the REST API's port.
    for (const line of incoming) assert.equal(line.req?.remotePort, answer.localPort);
    assert.equal(service.stdout().includes(key), false, "no API key in the log");
  });

  it("without traceparent the REST API's lines carry the id the gateway made, as over HTTP", async () => {
    const marker = randomBytes(6).toString("hex");
    const path = `/rest/applications?marker=${marker}`;
    const answer = await rawRequest(`${service.summary.gateway}${path}`, { "X-API-KEY": key });
    assert.equal(answer.status, 200);
    const deadline = Date.now() + 5_000;
    let ids: (string | undefined)[] = [];
    while (ids.length < 2 && Date.now() < deadline) {
      ids = service
        .stdout()
        .split("\n")
        .filter((line) => line.startsWith('{"level":') && line.includes(marker))
        .map((line) => (JSON.parse(line) as LogLine).reqId);
      if (ids.length < 2) await sleep(50);
    }
    assert.equal(ids.length, 2, "an incoming line at the gateway and one at the REST API");
    assert.match(ids[0] ?? "", /^[0-9a-f]{32}$/);
    assert.equal(ids[1], ids[0]);
  });
});
