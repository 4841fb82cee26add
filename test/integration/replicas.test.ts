import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type CallToolResult, Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { loadDemo } from "../../src/scanner/demo/load-demo.ts";
import { migrationNames, openStore } from "../../src/store/database.ts";
import { formsOf, postForm } from "../support/browserless-session.ts";
import { type CimdDocumentServer, startCimdDocumentServer } from "../support/cimd-document-server.ts";
import { runCli, spawnService } from "../support/cli.ts";
import { seedCimdClient, seedUsers, USERS } from "../support/idp-service.ts";
import {
  authorize,
  type ClientSetup,
  decodeJwt,
  exchangeToken,
  refresh,
  startAuthorization,
} from "../support/oauth-flow.ts";
import { freePort } from "../support/service.ts";
import { storedSecret } from "../support/stored-secrets.ts";
import { createTestStore, type TestStore } from "../support/stores.ts";
import { type SwitchProxy, startSwitchProxy } from "../support/switch-proxy.ts";

/**
 * Several real `imaging start` processes on one PostgreSQL, as replicas behind a load balancer: each
 * has its own data directory, all share the store and IMAGING_SECRETS_KEY, and PUBLIC_URL is one
 * address in front of them (a loopback forwarder that lets the test choose the replica per request).
 */
const KEY = randomBytes(32).toString("base64");

interface Replica {
  child: ChildProcess;
  port: number;
  dataDir: string;
  stderr: () => string;
}

describe("replicas on one PostgreSQL store (issue 16)", () => {
  let store: TestStore;
  let documents: CimdDocumentServer;
  let proxy: SwitchProxy;
  let caFile: string;
  const replicas: Record<string, Replica> = {};
  const dirs: string[] = [];

  const env = (proxyUrl: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({
    DATABASE_URL: store.databaseUrl,
    PUBLIC_URL: proxyUrl,
    IMAGING_SECRETS_KEY: KEY,
    REST_PORT: "0",
    MCP_ANALYSIS_PORT: "0",
    MCP_GATEKEEPER_PORT: "0",
    IMAGING_BIND_ADDRESS: "127.0.0.1",
    IDP_EXTRA_CA_FILE: caFile,
    KEY_POLL_INTERVAL: "0.2",
    LOG_LEVEL: "warn",
    ...extra,
  });
  const dataDir = () => {
    const dir = mkdtempSync(join(tmpdir(), "imaging-replica-"));
    dirs.push(dir);
    return dir;
  };
  const startReplica = async (
    name: string,
    proxyUrl: string,
    extra: NodeJS.ProcessEnv = {},
    args: string[] = [],
  ) => {
    const port = await freePort();
    const dir = dataDir();
    const service = await spawnService(
      ["--data-dir", dir, "--port", String(port), ...args],
      env(proxyUrl, extra),
      120_000,
    );
    replicas[name] = { child: service.child, port, dataDir: dir, stderr: service.stderr };
    return {
      ...(replicas[name] as Replica),
      summary: service.summary as typeof service.summary & { mcp: Record<string, string> },
    };
  };
  const portOf = (name: string) => () => (replicas[name] as Replica).port;

  let setup: ClientSetup;

  before(async () => {
    store = await createTestStore("postgres");
    documents = await startCimdDocumentServer();
    const caDir = dataDir();
    caFile = join(caDir, "ca.pem");
    writeFileSync(caFile, documents.ca);
    proxy = await startSwitchProxy(0, {
      A: portOf("A"),
      B: portOf("B"),
      C: portOf("C"),
      D: portOf("D"),
    });

    // Replicas starting together on an empty database: the migrations run once, under Kysely's
    // PostgreSQL advisory lock; the others wait and find nothing to do.
    const [a] = await Promise.all(["A", "B", "C"].map((name) => startReplica(name, proxy.url)));
    // D runs only the gateway (and so the identity provider), with A's REST API and MCP servers.
    const internal = (a as Awaited<ReturnType<typeof startReplica>>).summary;
    await startReplica(
      "D",
      proxy.url,
      {
        REST_UPSTREAM_URL: internal.rest,
        MCP_ANALYSIS_UPSTREAM_URL: internal.mcp.analysis,
        MCP_GATEKEEPER_UPSTREAM_URL: internal.mcp.gatekeeper,
      },
      ["--only", "gateway"],
    );

    const handle = await openStore({ databaseUrl: store.databaseUrl, sqliteFile: store.sqliteFile });
    try {
      await loadDemo(handle.db);
      await seedUsers(handle.db);
      await seedCimdClient(handle.db, "test-ai-client", documents.clientId);
    } finally {
      await handle.close();
    }
    setup = {
      issuer: `${proxy.url}/auth/realms/imaging`,
      clientId: documents.clientId,
      redirectUri: "http://127.0.0.1:49152/callback",
      resource: `${proxy.url}/mcp`,
    };
  });
  after(async () => {
    for (const replica of Object.values(replicas)) {
      if (replica.child.exitCode === null) {
        replica.child.kill("SIGTERM");
        await once(replica.child, "exit");
      }
    }
    await proxy?.close();
    await documents?.close();
    await store?.drop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  const jwks = async (replica: string) => {
    proxy.use(replica);
    const response = await fetch(`${setup.issuer}/jwks`);
    return ((await response.json()) as { keys: { kid: string }[] }).keys.map((k) => k.kid);
  };
  const listApplications = async (token: string) => {
    const client = new Client({ name: "replicas-test", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(setup.resource), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    try {
      return (await client.callTool({ name: "applications", arguments: {} })) as CallToolResult;
    } finally {
      await client.close();
    }
  };

  it("starting together, the replicas applied each migration exactly once between them", () => {
    const applied = Object.values(replicas).flatMap((r) =>
      [...r.stderr().matchAll(/\[store\] applied migrations: (.*)/g)].flatMap((m) =>
        (m[1] as string).split(", "),
      ),
    );
    assert.ok(applied.includes("013-service-state"), `migrations reported: ${applied.join(" ")}`);
    assert.deepEqual(
      [...applied].sort(),
      [...migrationNames],
      `every migration applied by one replica: ${applied.join(" ")}`,
    );
    assert.equal(new Set(applied).size, applied.length, `a migration ran twice: ${applied.join(" ")}`);
    for (const replica of Object.values(replicas))
      assert.doesNotMatch(replica.stderr(), /migration .* failed/);
  });

  it("publish the same signing keys, generated once into the store", async () => {
    const a = await jwks("A");
    assert.equal(a.length, 2);
    assert.deepEqual(await jwks("B"), a);
    assert.deepEqual(await jwks("C"), a);
  });

  it("sign-in with every step on another replica; the token works through B and C, refresh and exchange too", async () => {
    proxy.use("round-robin");
    const before = { ...proxy.served };
    const tokens = await authorize(setup, { username: "alice", password: USERS.alice.password });
    for (const name of ["A", "B", "C"]) {
      assert.ok(
        (proxy.served[name] ?? 0) > (before[name] ?? 0),
        `replica ${name} served part of the sign-in`,
      );
    }
    for (const name of ["B", "C"]) {
      proxy.use(name);
      const result = await listApplications(tokens.accessToken);
      assert.equal(result.isError, undefined, JSON.stringify(result.content));
      assert.match(JSON.stringify(result.content), /shop/);
    }
    proxy.use("C");
    const refreshed = await refresh(setup, tokens.refreshToken as string);
    proxy.use("A");
    assert.equal((await listApplications(refreshed.accessToken)).isError, undefined);
    // Any replica's exchange client secret is the store's one.
    proxy.use("B");
    const exchanged = await exchangeToken(
      setup.issuer,
      {
        clientId: "mcp-token-exchange",
        clientSecret: await storedSecret(store, "mcp-token-exchange", { secretsKey: KEY }),
      },
      { subject_token: tokens.accessToken },
    );
    assert.equal(exchanged.status, 200, JSON.stringify(exchanged.body));
  });

  it("a key rotation (imaging idp rotate-keys) is picked up by every replica within the poll interval", async () => {
    const [oldCurrent, oldNext] = await jwks("A");
    proxy.use("A");
    const early = await authorize(setup, { username: "alice", password: USERS.alice.password });
    const cli = await runCli(["idp", "rotate-keys", "--data-dir", dataDir(), "--json"], {
      DATABASE_URL: store.databaseUrl,
      IMAGING_SECRETS_KEY: KEY,
    });
    assert.equal(cli.code, 0, cli.stderr);
    const rotation = JSON.parse(cli.stdout) as { current: string; next: string };
    assert.equal(rotation.current, oldNext);
    for (const name of ["A", "B", "C", "D"]) {
      const deadline = Date.now() + 10_000;
      while ((await jwks(name))[0] !== rotation.current) {
        assert.ok(Date.now() < deadline, `replica ${name} did not load the rotated keys`);
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.deepEqual(await jwks(name), [rotation.current, rotation.next, oldCurrent]);
    }
    proxy.use("B");
    const late = await authorize(setup, { username: "bob", password: USERS.bob.password });
    assert.equal(decodeJwt(late.accessToken).header.kid, rotation.current, "B signs with the new key");
    for (const name of ["A", "C"]) {
      proxy.use(name);
      assert.equal((await listApplications(late.accessToken)).isError, undefined, `new token on ${name}`);
      assert.equal((await listApplications(early.accessToken)).isError, undefined, `old token on ${name}`);
    }
  });

  it("a gateway-only replica (--only gateway) signs in and serves like the others", async () => {
    proxy.use("D");
    const onD = await authorize(setup, { username: "bob", password: USERS.bob.password });
    proxy.use("B");
    assert.equal((await listApplications(onD.accessToken)).isError, undefined, "D's token on B");
    proxy.use("B");
    const onB = await authorize(setup, { username: "alice", password: USERS.alice.password });
    proxy.use("D");
    const result = await listApplications(onB.accessToken);
    assert.equal(result.isError, undefined, "B's token on D");
    assert.match(JSON.stringify(result.content), /shop/);
    assert.deepEqual(await jwks("D"), await jwks("A"));
  });

  it("sign-in throttling is shared: failures on A lock the account on B", async () => {
    const attempt = async (replica: string, password: string) => {
      proxy.use(replica);
      const started = await startAuthorization(setup);
      const [form] = formsOf(started.html, started.pageUrl);
      assert.ok(form, "a sign-in form");
      const response = await postForm(started.jar, form, { username: "carol-unknown", password });
      return { status: response.status, text: await response.text() };
    };
    for (let i = 0; i < 5; i++) assert.equal((await attempt(i % 2 === 0 ? "A" : "C", "wrong")).status, 401);
    const onB = await attempt("B", "wrong");
    assert.equal(onB.status, 429, "the sixth attempt is refused on another replica");
    assert.match(onB.text, /Too many failed sign-in attempts for this account/);
  });

  it("a replica given another secrets key stops at start with one line naming the fix", async () => {
    const port = await freePort();
    await assert.rejects(
      spawnService(
        ["--data-dir", dataDir(), "--port", String(port)],
        env(proxy.url, { IMAGING_SECRETS_KEY: randomBytes(32).toString("hex") }),
      ),
      (error: Error) => {
        // spawnService reports "service exited with 1: <stderr>".
        const lines = error.message.split("\n").filter((l) => l.includes("imaging: "));
        assert.equal(lines.length, 1, error.message);
        assert.match(lines[0] as string, /sealed with another key .*IMAGING_SECRETS_KEY/);
        assert.doesNotMatch(error.message, /\n\s+at /, "no stack trace");
        assert.ok(!error.message.includes(KEY), "the key is never printed");
        return true;
      },
    );
  });
});
