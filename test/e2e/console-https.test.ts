import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Browser } from "playwright-core";
import { openStore } from "../../src/store/database.ts";
import { spawnService } from "../support/cli.ts";
import {
  ensureConsoleBuilt,
  launchBrowser,
  signInToConsole,
  waitForHeading,
} from "../support/console-browser.ts";
import { seedUsers, USERS } from "../support/idp-service.ts";
import { freePort, internalPortsBeside } from "../support/service.ts";
import { createTestStore, type TestStore } from "../support/stores.ts";
import { makeTestCertificates } from "../support/test-certificates.ts";

/**
 * Over https (TLS_CERT_FILE, base_url https://...), the console's session cookie is also `Secure`. The
 * service runs as `imaging start` in its own process, trusting the test CA for its calls to itself.
 */
describe("web console over https", () => {
  let store: TestStore;
  let dir: string;
  let child: ChildProcess | undefined;
  let base: string;
  let browser: Browser;

  before(async () => {
    await ensureConsoleBuilt();
    store = await createTestStore("sqlite");
    const handle = await openStore({ databaseUrl: store.databaseUrl, sqliteFile: store.sqliteFile });
    try {
      await seedUsers(handle.db);
    } finally {
      await handle.close();
    }
    dir = mkdtempSync(join(tmpdir(), "imaging-console-tls-"));
    const certificates = makeTestCertificates(dir);
    const port = await freePort();
    const internal = await internalPortsBeside(port);
    base = `https://127.0.0.1:${port}`;
    const started = await spawnService(["--data-dir", store.dataDir, "--port", String(port)], {
      PUBLIC_URL: base,
      TLS_CERT_FILE: certificates.certFile,
      TLS_KEY_FILE: certificates.keyFile,
      NODE_EXTRA_CA_CERTS: certificates.caFile,
      IMAGING_BIND_ADDRESS: "127.0.0.1",
      REST_PORT: String(internal.restPort),
      MCP_ANALYSIS_PORT: String(internal.mcpAnalysisPort),
      MCP_GATEKEEPER_PORT: String(internal.mcpGatekeeperPort),
    });
    child = started.child;
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    if (child && child.exitCode === null) {
      child.kill("SIGTERM");
      await once(child, "exit");
    }
    await store?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("sets the session cookie Secure, HttpOnly and SameSite=Lax", async () => {
    const context = await browser.newContext({ ignoreHTTPSErrors: true });
    try {
      const page = await context.newPage();
      await signInToConsole(
        page,
        base,
        { username: "alice", password: USERS.alice.password },
        "/console/status",
      );
      await waitForHeading(page, "Status");
      const cookie = (await context.cookies()).find((c) => c.name === "imaging_console");
      assert.ok(cookie);
      assert.equal(cookie.secure, true);
      assert.equal(cookie.httpOnly, true);
      assert.equal(cookie.sameSite, "Lax");
    } finally {
      await context.close();
    }
  });
});
