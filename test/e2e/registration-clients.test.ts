import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type Browser, chromium } from "playwright-core";
import { loadDemo } from "../../src/scanner/demo/load-demo.ts";
import { type IdpService, seedUsers, startIdpService, USERS } from "../support/idp-service.ts";
import { CHROMIUM_FLAGS } from "../support/mcp-sign-in.ts";
import {
  applicationsThroughProxy,
  ensureMcpRemote,
  ensurePythonMcp,
  pathWithoutDesktopBrowser,
  StdioPeer,
} from "../support/real-clients.ts";
import { createTestStore, type TestStore } from "../support/stores.ts";

/**
 * Real clients that only know dynamic client registration, installed from their registries:
 * mcp-remote (npm, default flags) and the Python MCP SDK's OAuth client without a client metadata
 * URL (PyPI). Each registers with the embedded provider, its user signs in and consents in headless
 * Chromium, and it calls a tool through the gateway. With registration off they fail as before.
 */
const PYTHON_CLIENT = join(process.cwd(), "test", "support", "python", "registering_client.py");

describe("clients that only register sign in (embedded provider, DYNAMIC_CLIENT_REGISTRATION=loopback)", () => {
  let store: TestStore;
  let offStore: TestStore;
  let idp: IdpService;
  let off: IdpService;
  let browser: Browser;
  let mcpRemote: string;
  let python: string;
  const homes: string[] = [];
  const peers: StdioPeer[] = [];

  before(async () => {
    mcpRemote = ensureMcpRemote();
    python = ensurePythonMcp();
    store = await createTestStore("sqlite");
    offStore = await createTestStore("sqlite");
    const seed = async (handle: { db: Parameters<typeof loadDemo>[0] }) => {
      await loadDemo(handle.db);
      await seedUsers(handle.db);
    };
    idp = await startIdpService(store, { overrides: { dynamicClientRegistration: "loopback" }, seed });
    off = await startIdpService(offStore, { seed });
    browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_FLAGS });
  });
  after(async () => {
    for (const peer of peers) await peer.stop();
    await browser?.close();
    await idp?.stop();
    await off?.stop();
    await store?.drop();
    await offStore?.drop();
    for (const home of homes) rmSync(home, { recursive: true, force: true });
  });

  /** A client process with its own home (mcp-remote keeps its registrations there) and no desktop browser. */
  const start = (command: string, args: string[]) => {
    const home = mkdtempSync(join(tmpdir(), "imaging-client-home-"));
    homes.push(home);
    const peer = new StdioPeer(command, args, {
      PATH: pathWithoutDesktopBrowser(),
      HOME: home,
      MCP_REMOTE_CONFIG_DIR: join(home, ".mcp-auth"),
    });
    peers.push(peer);
    return peer;
  };

  /** The user's part, in Chromium: sign in, see the unverified client on the consent page, allow. */
  const signIn = async (authorizationUrl: string, clientName: RegExp) => {
    const page = await browser.newPage();
    try {
      await page.goto(authorizationUrl);
      await page.locator('input[name="username"]').fill("alice");
      await page.locator('input[name="password"]').fill(USERS.alice.password);
      await page.locator('input[name="password"]').press("Enter");
      await page.locator("#approve").waitFor({ timeout: 15_000 });
      const consent = await page.content();
      assert.match(consent, clientName, "the consent page names the client");
      assert.match(await page.locator("#unverified").innerText(), /Unverified/);
      await page.locator("#approve").click();
      // The client's loopback callback (the gateway is on loopback too: told apart by the path).
      await page.waitForURL(
        (url) => url.pathname.endsWith("/callback") && !url.pathname.startsWith("/auth"),
        {
          timeout: 15_000,
        },
      );
    } finally {
      await page.close();
    }
  };

  it("mcp-remote (default flags) registers, signs in and calls a tool through the gateway", async () => {
    const peer = start(process.execPath, [mcpRemote, idp.mcp]);
    const [, url] = await peer.waitForStderr(/Please authorize this client by visiting:\s*\n(\S+)/, 60_000);
    await signIn(url as string, /MCP CLI Proxy|mcp-remote/i);
    assert.deepEqual(await applicationsThroughProxy(peer), [
      "claims-portal",
      "payments-service",
      "storefront-web",
    ]);
  });

  it("the Python MCP SDK's OAuth client (no metadata URL) registers, signs in and calls a tool", async () => {
    const peer = start(python, [PYTHON_CLIENT, idp.mcp]);
    const [, url] = await peer.waitForStderr(/AUTHORIZE (\S+)/, 60_000);
    await signIn(url as string, /Python MCP SDK client/);
    assert.equal(await peer.exit(60_000), 0, peer.stderr);
    const [output] = peer.messages as {
      client_id: string;
      result: { structuredContent: { applications: { name: string }[] } };
    }[];
    assert.ok(output?.client_id, peer.stderr);
    assert.deepEqual(
      output.result.structuredContent.applications.map((a) => a.name),
      ["claims-portal", "payments-service", "storefront-web"],
    );
  });

  it("with the setting off, both fail as before: no registration endpoint", async () => {
    const remote = start(process.execPath, [mcpRemote, off.mcp]);
    assert.notEqual(await remote.exit(60_000), 0);
    assert.match(remote.stderr, /does not support dynamic client registration/);
    const sdk = start(python, [PYTHON_CLIENT, off.mcp]);
    assert.notEqual(await sdk.exit(60_000), 0);
    assert.doesNotMatch(sdk.stderr, /AUTHORIZE /, "no sign-in was started");
    // The SDK falls back to /register at the root, which answers as before.
    assert.match(
      sdk.stderr,
      /OAuthRegistrationError: Registration failed: 404 .*Dynamic client registration is not offered/,
    );
  });
});
