import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import * as oauth from "oauth4webapi";
import { type Browser, chromium } from "playwright-core";
import { createApiKey } from "../../src/domain/api-keys.ts";
import { loadDemo } from "../../src/scanner/demo/load-demo.ts";
import { openStore } from "../../src/store/database.ts";
import { type CimdDocumentServer, startCimdDocumentServer } from "../support/cimd-document-server.ts";
import { CLI } from "../support/cli.ts";
import { seedCimdClient, seedUsers, USERS } from "../support/idp-service.ts";
import {
  aiClientProvider,
  applicationNames,
  CHROMIUM_FLAGS,
  connectWithSignIn,
} from "../support/mcp-sign-in.ts";
import { type CallbackServer, startCallbackServer } from "../support/oauth-callback.ts";
import { freePort } from "../support/service.ts";
import { storedSecret } from "../support/stored-secrets.ts";
import { createTestStore, type TestStore } from "../support/stores.ts";

/**
 * The whole log of `imaging start` (every level, stdout and stderr) during a full sign-in in headless
 * Chromium, a tool call, a refresh, REST calls with an API key, and the credentials a careless client
 * puts in the query string: none of the tokens and secrets used may appear in it.
 */
describe("the service's log holds no token or secret (full sign-in, tool call, REST)", () => {
  let store: TestStore;
  let documents: CimdDocumentServer;
  let callback: CallbackServer;
  let browser: Browser;
  let service: ChildProcess;
  let log = "";
  let base: string;
  let apiKey: string;

  before(async () => {
    documents = await startCimdDocumentServer();
    callback = await startCallbackServer();
    store = await createTestStore("sqlite");
    const handle = await openStore({ sqliteFile: store.sqliteFile });
    try {
      await loadDemo(handle.db);
      await seedUsers(handle.db);
      await seedCimdClient(handle.db, "test-ai-client", documents.clientId);
      apiKey = (await createApiKey(handle.db, { user: "script", role: "admin", applications: [] })).key;
    } finally {
      await handle.close();
    }
    const caFile = join(store.dataDir, "test-ca.pem");
    writeFileSync(caFile, documents.ca);
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    service = spawn(process.execPath, [CLI, "start", "--data-dir", store.dataDir, "--port", String(port)], {
      env: {
        ...process.env,
        PUBLIC_URL: base,
        IMAGING_BIND_ADDRESS: "127.0.0.1",
        REST_PORT: "0",
        MCP_ANALYSIS_PORT: "0",
        MCP_GATEKEEPER_PORT: "0",
        IDP_EXTRA_CA_FILE: caFile,
        // Everything the service can log.
        LOG_LEVEL: "trace",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    service.stdout?.on("data", (d) => {
      log += d;
    });
    service.stderr?.on("data", (d) => {
      log += d;
    });
    const deadline = Date.now() + 30_000;
    for (;;) {
      const up = await fetch(`${base}/mcp/healthcheck`).then(
        (r) => r.ok,
        () => false,
      );
      if (up) break;
      if (Date.now() > deadline || service.exitCode !== null)
        throw new Error(`the service did not start: ${log}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_FLAGS });
  });
  after(async () => {
    await browser?.close();
    if (service && service.exitCode === null) {
      service.kill("SIGKILL");
      await once(service, "exit");
    }
    await callback?.close();
    await documents?.close();
    await store?.drop();
  });

  it("after everything a user and a careless client do, every secret is absent from the log", async () => {
    const secrets: Record<string, string> = {
      "alice's password": USERS.alice.password,
      "the API key": apiKey,
      "mcp-token-exchange's client secret": await storedSecret(store, "mcp-token-exchange"),
    };

    // 1. Sign-in in Chromium (sign-in and consent pages), as Claude Code does it.
    const state = aiClientProvider({
      clientMetadataUrl: documents.clientId,
      callback,
      signInInBrowser: async (authorizationUrl) => {
        const page = await browser.newPage();
        try {
          await page.goto(authorizationUrl.href);
          await page.locator('input[name="username"]').fill("alice");
          await page.locator('input[name="password"]').fill(USERS.alice.password);
          await page.locator('input[name="password"]').press("Enter");
          await page.locator("#approve").click();
          await page.waitForURL((url) => url.href.startsWith(callback.url));
          for (const cookie of await page.context().cookies(base)) {
            if (cookie.value.length >= 8) secrets[`cookie ${cookie.name}`] = cookie.value;
          }
        } finally {
          await page.close();
        }
      },
    });
    const { client, saved } = await connectWithSignIn(`${base}/mcp`, state);
    const code = (await state.callbackParams())?.get("code");
    assert.ok(code, "the browser brought a code back");
    secrets["the authorization code"] = code;
    secrets["the access token"] = saved.tokens?.access_token as string;
    secrets["the refresh token"] = saved.tokens?.refresh_token as string;
    assert.ok(
      Object.keys(secrets).some((name) => name.startsWith("cookie imaging_session")),
      "session cookie seen",
    );

    // 2. A tool call (token verified, exchanged, REST API called with the platform token).
    try {
      assert.equal((await applicationNames(client)).length, 3);
    } finally {
      await client.close();
    }

    // 3. The refresh token redeemed (rotated).
    const issuer = new URL(`${base}/auth/realms/imaging`);
    const as = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { [oauth.allowInsecureRequests]: true }),
    );
    const aiClient: oauth.Client = { client_id: documents.clientId, token_endpoint_auth_method: "none" };
    const renewed = await oauth.processRefreshTokenResponse(
      as,
      aiClient,
      await oauth.refreshTokenGrantRequest(
        as,
        aiClient,
        oauth.None(),
        secrets["the refresh token"] as string,
        {
          [oauth.allowInsecureRequests]: true,
          additionalParameters: { resource: `${base}/mcp` },
        },
      ),
    );
    secrets["the renewed access token"] = renewed.access_token;
    secrets["the renewed refresh token"] = renewed.refresh_token as string;

    // 4. The REST API with the API key, and what careless clients send in URLs and headers.
    const access = secrets["the access token"] as string;
    const rest = await fetch(`${base}/rest/applications`, { headers: { "x-api-key": apiKey } });
    assert.equal(rest.status, 200);
    await rest.body?.cancel();
    const careless = [
      `${base}/mcp?access_token=${access}`,
      `${base}/rest/applications?access_token=${encodeURIComponent(access)}&limit=5`,
      `${base}/rest/applications?X-API-KEY=${apiKey}`,
      `${base}/rest/health?code=${code}&refresh_token=${secrets["the renewed refresh token"]}&client_secret=${secrets["mcp-token-exchange's client secret"]}&password=${encodeURIComponent(USERS.alice.password)}`,
      `${base}/auth/realms/imaging/token?refresh_token=${secrets["the renewed refresh token"]}`,
      `${base}/no/such/path?access_token=${access}`,
    ];
    for (const url of careless) {
      const response = await fetch(url, {
        headers: { authorization: `Bearer ${access}`, cookie: `imaging_session=${access}` },
      });
      assert.ok(response.status < 500, `${url.split("?")[0]}: ${response.status}`);
      await response.body?.cancel();
    }

    // The service stops (its last lines written), then its whole log is searched.
    service.kill("SIGTERM");
    await once(service, "exit");
    assert.match(log, /access_token=\[REDACTED\]/, "request URLs are logged, credentials redacted");
    assert.match(log, /"url":"\/rest\/applications\?access_token=\[REDACTED\]&limit=5"/);
    for (const [name, value] of Object.entries(secrets)) {
      assert.ok(value && value.length >= 8, `${name} is known`);
      for (const form of new Set([value, encodeURIComponent(value)])) {
        // The failure names the line (the secret itself masked), so the leak can be found.
        const line = log.split("\n").find((l) => l.includes(form));
        assert.equal(line?.replaceAll(form, "<secret>"), undefined, `${name} appears in the log`);
      }
    }
  });
});
