import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { after, before, describe, it } from "node:test";
import type { Browser, Page } from "playwright-core";
import { loadDemo } from "../../src/scanner/demo/load-demo.ts";
import { type CimdDocumentServer, startCimdDocumentServer } from "../support/cimd-document-server.ts";
import {
  auditAccessibility,
  ensureConsoleBuilt,
  launchBrowser,
  screenshot,
  signInToConsole,
  waitForHeading,
  watchedContext,
} from "../support/console-browser.ts";
import { type IdpService, seedUsers, startIdpService, USERS } from "../support/idp-service.ts";
import { authorize, decodeJwt, startAuthorization } from "../support/oauth-flow.ts";
import { createTestStore, type TestStore } from "../support/stores.ts";

/**
 * The administration pages of the web console (embedded identity provider, headless Chromium): a CIMD
 * policy created and linked in the browser lets a real client sign in; an API key created in the browser
 * works with curl and stops working once revoked; a user added in the browser signs in; viewers are
 * refused by the API.
 */
const alice = { username: "alice", password: USERS.alice.password };
const bob = { username: "bob", password: USERS.bob.password };
const redirectUri = "http://127.0.0.1/callback";

/** curl, as a script would call the REST API with the key. */
async function curl(url: string, key: string): Promise<{ status: number; body: string }> {
  const child = spawn("curl", ["-sS", "-H", `X-API-KEY: ${key}`, "-w", "\n%{http_code}", url]);
  let out = "";
  child.stdout.on("data", (d) => {
    out += d;
  });
  const [code] = (await once(child, "close")) as [number];
  assert.equal(code, 0, "curl ran");
  const lines = out.split("\n");
  return { status: Number(lines.pop()), body: lines.join("\n") };
}

describe("web console administration pages (embedded identity provider, headless Chromium)", () => {
  let store: TestStore;
  let idp: IdpService;
  let browser: Browser;
  let documents: CimdDocumentServer;

  before(async () => {
    await ensureConsoleBuilt();
    documents = await startCimdDocumentServer("/oauth/client-metadata.json", [redirectUri]);
    store = await createTestStore("sqlite");
    idp = await startIdpService(store, {
      idp: { cimdCa: documents.ca },
      seed: async (handle) => {
        await loadDemo(handle.db);
        await seedUsers(handle.db);
      },
    });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await idp?.stop();
    await documents?.close();
    await store?.drop();
  });

  const fieldError = (page: Page, id: string) => page.locator(`#${id}-error`);

  it("creates and links a CIMD policy in the browser, which then lets a real client sign in", async () => {
    const setup = { issuer: idp.issuer, clientId: documents.clientId, redirectUri, resource: idp.mcp };
    const before = await startAuthorization(setup);
    assert.equal(before.status, 400, "without a policy the client is refused");

    const watched = await watchedContext(browser);
    try {
      const page = watched.page;
      await signInToConsole(page, idp.base, alice, "/console/cimd-policies");
      await waitForHeading(page, "CIMD client policies");
      await page.getByText("No CIMD client yet").waitFor();

      // Inline validation: the API's refusal is shown beside the field, naming the rule.
      await page.getByLabel("From").selectOption("");
      await page.getByLabel("Client name").fill("test-client");
      await page.getByLabel("client_id URL").fill(documents.clientId.replace("https:", "http:"));
      await page.getByRole("button", { name: "Create", exact: true }).click();
      await fieldError(page, "cimd-client-id").waitFor();
      assert.match(
        (await fieldError(page, "cimd-client-id").textContent()) ?? "",
        /client_id must use https.*\(rule client-id-scheme\)/,
      );
      assert.equal(await page.getByLabel("client_id URL").getAttribute("aria-invalid"), "true");

      await page.getByLabel("client_id URL").fill(documents.clientId);
      await page.getByLabel("Policy trusted domains").fill("127.0.0.1");
      await page.getByRole("button", { name: "Create", exact: true }).click();
      await page.getByRole("heading", { name: "test-client", level: 3 }).waitFor();
      await page.getByText("test-client created and linked").waitFor();

      // Unlinked in the console: the identity provider ignores the policy at once.
      await page.getByRole("button", { name: "Unlink test-client" }).click();
      await page.getByText(/CIMD is ignored/).waitFor();
      assert.equal((await startAuthorization(setup)).status, 400, "unlinked: refused");

      await page.getByRole("button", { name: "Link test-client" }).click();
      await page.getByRole("button", { name: "Unlink test-client" }).waitFor();
      await auditAccessibility(page, "the CIMD client policies page");
      await screenshot(page, "cimd-policies");
      watched.assertClean();
    } finally {
      await watched.close();
    }

    const tokens = await authorize(setup, alice);
    assert.equal(decodeJwt(tokens.accessToken).payload.sub !== undefined, true, "the client signed in");
  });

  it("creates an API key shown once that works with curl, then revokes it", async () => {
    const watched = await watchedContext(browser);
    try {
      const page = watched.page;
      await signInToConsole(page, idp.base, alice, "/console/users");
      await waitForHeading(page, "Users and API keys");
      await page.getByLabel("Acts for (user)").fill("ci-bot");
      await page.locator("#key-apps").fill("storefront-web");
      await page.getByRole("button", { name: "Create API key" }).click();
      const shown = page.getByTestId("shown-once");
      await shown.waitFor();
      const key = ((await shown.textContent()) ?? "").trim();
      assert.match(key, /^imk_[0-9a-f]{16}_/);
      const id = key.slice(4, 20);

      const answer = await curl(`${idp.base}/rest/applications`, key);
      assert.equal(answer.status, 200, answer.body);
      assert.deepEqual(
        (JSON.parse(answer.body) as { name: string }[]).map((a) => a.name),
        ["storefront-web"],
      );

      await page.getByRole("button", { name: "Done" }).click();
      assert.equal(await page.getByText(key).count(), 0, "the key is not shown again");
      await page.getByRole("button", { name: `Revoke ${id}` }).click();
      await page.getByText(`API key ${id} revoked`).waitFor();
      const revoked = await curl(`${idp.base}/rest/applications`, key);
      assert.equal(revoked.status, 401, revoked.body);
      watched.assertClean();
    } finally {
      await watched.close();
    }
  });

  it("adds a user with a generated password (shown once) who then signs in; grants and removes", async () => {
    const watched = await watchedContext(browser);
    let password = "";
    try {
      const page = watched.page;
      await signInToConsole(page, idp.base, alice, "/console/users");
      await waitForHeading(page, "Users and API keys");
      await page.getByLabel("User name").fill("bad name");
      await page.getByRole("button", { name: "Add user" }).click();
      await fieldError(page, "user-name").waitFor();
      assert.match((await fieldError(page, "user-name").textContent()) ?? "", /\(rule invalid-username\)/);

      await page.getByLabel("User name").fill("carol");
      await page.locator("#user-apps").fill("storefront-web");
      await page.getByRole("button", { name: "Add user" }).click();
      const shown = page.getByTestId("shown-once");
      await shown.waitFor();
      password = ((await shown.textContent()) ?? "").trim();
      assert.ok(password.length >= 12);
      await page.getByRole("cell", { name: "carol", exact: true }).waitFor();
      await auditAccessibility(page, "the Users and API keys page");
      await page.getByRole("button", { name: "Done" }).click();
      assert.equal(await page.getByText(password).count(), 0, "the password is not shown again");
      await screenshot(page, "users");
      watched.assertClean();
    } finally {
      await watched.close();
    }

    // carol signs in to the console; as a viewer she does not get the administration pages' data.
    const carol = await watchedContext(browser);
    try {
      await signInToConsole(carol.page, idp.base, { username: "carol", password }, "/console/users");
      await carol.page
        .getByRole("alert")
        .getByText(/Only administrators may manage/)
        .first()
        .waitFor();
      assert.equal(
        await carol.page.getByRole("link", { name: "Users and API keys" }).count(),
        0,
        "a viewer's menu has no administration page",
      );
      carol.assertClean();
    } finally {
      await carol.close();
    }

    const admin = await watchedContext(browser);
    try {
      const page = admin.page;
      await signInToConsole(page, idp.base, alice, "/console/users");
      await page.getByRole("button", { name: "Rights of carol" }).click();
      await page.locator("#user-carol-role").selectOption("admin");
      // The list reloads after each change; held back here, its answer lands while the removal is being
      // confirmed, as it does on a slow link: the confirmation must survive it.
      let releaseList = () => {};
      const listHeld = new Promise<void>((resolve) => {
        releaseList = resolve;
      });
      await page.route("**/console/api/admin/users", async (route) => {
        if (route.request().method() === "GET") await listHeld;
        await route.continue();
      });
      await page.getByRole("button", { name: "Save rights of carol" }).click();
      await page.getByText("carol is now admin").waitFor();
      await page.getByRole("button", { name: "Remove carol" }).click();
      await page.getByRole("button", { name: "Confirm: remove carol" }).waitFor();
      releaseList();
      await page
        .getByRole("row")
        .filter({ has: page.getByRole("cell", { name: "carol", exact: true }) })
        .getByRole("cell", { name: "admin", exact: true })
        .waitFor();
      await page.unroute("**/console/api/admin/users");
      await page.getByRole("button", { name: "Confirm: remove carol" }).click();
      await page.getByText("carol removed").waitFor();
      await page.getByRole("cell", { name: "carol", exact: true }).waitFor({ state: "detached" });
      admin.assertClean();
    } finally {
      await admin.close();
    }
  });

  it("a viewer gets the API's refusal on the CIMD page", async () => {
    const watched = await watchedContext(browser);
    try {
      await signInToConsole(watched.page, idp.base, bob, "/console/cimd-policies");
      await watched.page
        .getByRole("alert")
        .getByText(/Only administrators may manage CIMD/)
        .first()
        .waitFor();
      assert.equal(await watched.page.getByRole("link", { name: "CIMD client policies" }).count(), 0);
      watched.assertClean();
    } finally {
      await watched.close();
    }
  });
});
