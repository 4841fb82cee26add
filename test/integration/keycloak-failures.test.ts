import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { after, before, describe, it } from "node:test";
import type { KeycloakAdmin } from "../../src/idp/keycloak/admin.ts";
import { CLI } from "../support/cli.ts";
import { USERS } from "../support/idp-service.ts";
import {
  connectTestAdmin,
  keycloakEnv,
  type TestKeycloak,
  uniqueRealm,
  useKeycloak,
} from "../support/keycloak.ts";
import { seedKeycloakUsers } from "../support/keycloak-service.ts";
import { freePort } from "../support/service.ts";
import { createTestStore, type TestStore } from "../support/stores.ts";
import { startTcpRelay, type TcpRelay } from "../support/tcp-relay.ts";

/**
 * What an administrator sees when Keycloak mode goes wrong (issue 17): `imaging start` with IDP=keycloak
 * reaching the real Keycloak through a TCP relay the test can cut. A refused token exchange is logged
 * once at warn with its cause and never a token; Keycloak going away gives clients a 503 JSON answer
 * with Retry-After and no internal address, and the log one line with the cause, then one when it is back.
 */
describe("Keycloak mode failures, as the gateway's clients and its log show them", () => {
  let keycloak: TestKeycloak;
  let store: TestStore;
  let relay: TcpRelay;
  let realm: string;
  let base: string;
  let issuer: string;
  let admin: KeycloakAdmin;
  let child: ChildProcess;
  let stdout = "";
  /** A public client allowed the password grant, standing in for an AI client's sign-in. */
  const directClient = "direct-grant-test-client";

  /** The gateway's log records (pino JSON lines on stdout). */
  const logRecords = () =>
    stdout
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as Record<string, unknown> & { msg?: string; level?: number });

  /**
   * The log records once `ready` holds for them. The gateway writes a line before it answers the
   * request that caused it, so the lines are on their way through the pipe when the answer arrives.
   */
  const logRecordsWhen = async (ready: (records: ReturnType<typeof logRecords>) => boolean) => {
    for (let i = 0; i < 100 && !ready(logRecords()); i++) await new Promise((r) => setTimeout(r, 100));
    return logRecords();
  };

  const userToken = async (user: keyof typeof USERS): Promise<string> => {
    const response = await fetch(`${issuer}/protocol/openid-connect/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "password",
        client_id: directClient,
        username: user,
        password: USERS[user].password,
        scope: "mcp:tools",
      }),
    });
    const body = (await response.json()) as { access_token?: string };
    assert.equal(response.status, 200, JSON.stringify(body));
    return body.access_token as string;
  };
  const initialize = (token: string) =>
    fetch(`${base}/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
      }),
    });
  async function setStandardTokenExchange(enabled: boolean) {
    const [client] = await admin.clients.find({ clientId: "mcp-token-exchange" });
    assert.ok(client?.id, "mcp-token-exchange provisioned");
    await admin.clients.update(
      { id: client.id },
      { ...client, attributes: { ...client.attributes, "standard.token.exchange.enabled": String(enabled) } },
    );
  }

  before(async () => {
    keycloak = await useKeycloak();
    const upstream = new URL(keycloak.url);
    relay = await startTcpRelay({ host: upstream.hostname, port: Number(upstream.port) });
    store = await createTestStore("sqlite");
    realm = uniqueRealm("fail");
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    issuer = `${base}/auth/realms/${realm}`;
    child = spawn(process.execPath, [CLI, "start", "--data-dir", store.dataDir], {
      env: {
        ...process.env,
        ...keycloakEnv(keycloak, realm),
        KEYCLOAK_URL: `http://127.0.0.1:${relay.port}/auth`,
        PUBLIC_URL: base,
        PORT: String(port),
        IMAGING_BIND_ADDRESS: "127.0.0.1",
        REST_PORT: "0",
        MCP_ANALYSIS_PORT: "0",
        MCP_GATEKEEPER_PORT: "0",
        DATABASE_URL: "",
        IMAGING_CONFIG: "",
        LOG_LEVEL: "info",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr?.on("data", (d) => {
      stderr += d;
    });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no start in 60 s: ${stderr}`)), 60_000);
      child.stdout?.on("data", (d) => {
        stdout += d;
        if (/imaging-services .* is up/.test(stdout)) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once("exit", (code) => reject(new Error(`service exited with ${code}: ${stderr}`)));
    });
    admin = await connectTestAdmin(keycloak, realm);
    await seedKeycloakUsers(admin);
    await admin.clients.create({
      clientId: directClient,
      publicClient: true,
      directAccessGrantsEnabled: true,
      standardFlowEnabled: false,
    });
  });
  after(async () => {
    if (child && child.exitCode === null) {
      child.kill("SIGTERM");
      await new Promise((resolve) => child.once("exit", resolve));
    }
    await relay?.close();
    await store?.drop();
  });

  it("logs a refused token exchange once at warn, with client, user, issuer and Keycloak's reason, never the token", async () => {
    const alice = await userToken("alice");
    assert.equal((await initialize(alice)).status, 200, "the exchange works before the mistake");

    await setStandardTokenExchange(false);
    let bob: string;
    try {
      bob = await userToken("bob");
      for (let i = 0; i < 5; i++) {
        const refused = await initialize(bob);
        assert.equal(refused.status, 401);
        assert.match(refused.headers.get("www-authenticate") ?? "", /error="invalid_token"/);
      }
    } finally {
      await setStandardTokenExchange(true);
    }
    const refusals = (
      await logRecordsWhen((all) => all.some((r) => r.event === "token_exchange_refused"))
    ).filter((r) => r.event === "token_exchange_refused");
    assert.equal(refusals.length, 1, `one line for five refusals: ${JSON.stringify(refusals)}`);
    const [line] = refusals;
    assert.equal(line?.level, 40, "warn");
    assert.equal(line?.client, directClient);
    assert.equal(line?.user, "bob");
    assert.equal(line?.issuer, issuer);
    assert.equal(line?.error, "invalid_request");
    assert.equal(line?.error_description, "Standard token exchange is not enabled for the requested client");
    assert.match(
      line?.msg ?? "",
      new RegExp(
        `^token exchange refused by the identity provider for client ${directClient}, user bob \\(sub [0-9a-f-]+\\), issuer ${issuer}: 400 invalid_request "Standard token exchange is not enabled for the requested client"`,
      ),
    );
    for (const token of [alice, bob]) {
      assert.ok(!stdout.includes(token), "no token in the log");
      assert.ok(!stdout.includes(token.split(".")[2] as string), "not even a token's signature");
    }
  });

  it("answers 503 JSON with Retry-After and no internal address while Keycloak is down, logs the cause once and the recovery", async () => {
    const alice = await userToken("alice");
    assert.equal((await initialize(alice)).status, 200);
    const discovery = `${issuer}/.well-known/openid-configuration`;
    await relay.pause();
    try {
      for (const url of [discovery, `${issuer}/protocol/openid-connect/certs`, discovery]) {
        const response = await fetch(url);
        const text = await response.text();
        assert.equal(response.status, 503, text);
        assert.equal(response.headers.get("retry-after"), "5");
        assert.match(response.headers.get("content-type") ?? "", /^application\/json/);
        assert.deepEqual(JSON.parse(text), {
          error: "temporarily_unavailable",
          error_description: "The identity provider is not reachable right now; try again in a few seconds.",
        });
        assert.doesNotMatch(text, new RegExp(`127\\.0\\.0\\.1|${relay.port}|ECONNREFUSED`));
      }
      // What an AI client probes first, through the gateway's redirect to the issuer's document.
      const probe = await fetch(`${base}/.well-known/oauth-authorization-server/mcp`);
      assert.equal(probe.status, 503);
      // A token already verified and exchanged keeps working.
      assert.equal((await initialize(alice)).status, 200, "cached tokens survive Keycloak going down");
    } finally {
      await relay.resume();
    }
    const back = await fetch(discovery);
    assert.equal(back.status, 200);
    const records = await logRecordsWhen((all) =>
      all.some((r) => /Keycloak answers again/.test(r.msg ?? "")),
    );
    const down = records.filter((r) => /does not answer/.test(r.msg ?? ""));
    assert.equal(down.length, 1, `the cause is logged once: ${JSON.stringify(down)}`);
    assert.equal(down[0]?.level, 50, "error");
    assert.match(down[0]?.msg ?? "", new RegExp(`KEYCLOAK_URL http://127\\.0\\.0\\.1:${relay.port}/auth`));
    assert.match(down[0]?.msg ?? "", /ECONNREFUSED/);
    assert.ok(
      !records.some((r) => r.msg === "response errored"),
      "no per-request upstream error lines besides it",
    );
    const up = records.filter((r) => /Keycloak answers again/.test(r.msg ?? ""));
    assert.equal(up.length, 1);
    assert.match(up[0]?.msg ?? "", /\(4 requests got 503 while it did not\)/);
  });
});
