import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Browser } from "playwright-core";
import { loadDemo } from "../../src/scanner/demo/load-demo.ts";
import { ensureConsoleBuilt, launchBrowser, signInToConsole } from "../support/console-browser.ts";
import { type IdpService, seedUsers, startIdpService, USERS } from "../support/idp-service.ts";
import { freePort } from "../support/service.ts";
import { createTestStore, type TestStore } from "../support/stores.ts";

/**
 * Console sessions live in the store, not in a gateway process: a browser signed in through gateway A is
 * served by gateway B (same PostgreSQL store, same base_url, as two replicas behind a load balancer), and
 * a sign-out through B ends the session for A too.
 */
describe("console sessions across gateway replicas (PostgreSQL)", () => {
  let store: TestStore;
  let a: IdpService;
  let b: IdpService;
  let browser: Browser;
  let launched: Promise<Browser> | undefined;

  before(async () => {
    // Chromium starts while the two gateways do.
    launched = launchBrowser();
    launched.catch(() => undefined);
    await ensureConsoleBuilt();
    store = await createTestStore("postgres");
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    a = await startIdpService(store, {
      port,
      seed: async (handle) => {
        await loadDemo(handle.db);
        await seedUsers(handle.db);
      },
    });
    b = await startIdpService(store, { port: await freePort(), overrides: { publicUrl: base } });
    browser = await launched;
  });
  after(async () => {
    // a browser launched while a gateway failed to start is closed too
    await (browser ?? (await launched?.catch(() => undefined)))?.close();
    await b?.stop();
    await a?.stop();
    await store?.drop();
  });

  it("a session made by replica A works on replica B, and signing out on B ends it on A", async () => {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await signInToConsole(
        page,
        a.base,
        { username: "alice", password: USERS.alice.password },
        "/console/status",
      );
      const cookie = (await context.cookies()).find((c) => c.name === "imaging_console");
      assert.ok(cookie);
      const headers = { cookie: `imaging_console=${cookie.value}` };
      const onB = b.service.gatewayUrl;
      const session = await fetch(`${onB}/console/session`, { headers });
      assert.equal(session.status, 200);
      const info = (await session.json()) as { user: string; isAdmin: boolean; csrfToken: string };
      assert.equal(info.user, "alice");
      assert.equal(info.isAdmin, true);
      const apps = await fetch(`${onB}/console/api/applications`, { headers });
      assert.equal(apps.status, 200);
      assert.match(await apps.text(), /payments-service/);
      const signOut = await fetch(`${onB}/console/sign-out`, {
        method: "POST",
        headers: { ...headers, "x-csrf-token": info.csrfToken },
      });
      assert.equal(signOut.status, 200);
      assert.equal((await fetch(`${a.base}/console/session`, { headers })).status, 401, "gone on A too");
    } finally {
      await context.close();
    }
  });
});
