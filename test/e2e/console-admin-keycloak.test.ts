import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Browser } from "playwright-core";
import {
  auditAccessibility,
  ensureConsoleBuilt,
  launchBrowser,
  screenshot,
  signInToConsole,
  waitForHeading,
  watchedContext,
} from "../support/console-browser.ts";
import { USERS } from "../support/idp-service.ts";
import {
  type KeycloakService,
  seedKeycloakUsers,
  startKeycloakService,
} from "../support/keycloak-service.ts";

/**
 * The administration pages with Keycloak as the identity provider: users are a read-only view linking
 * to Keycloak's admin console; CIMD policies made in the console are Keycloak's client policies.
 */
const alice = { username: "alice", password: USERS.alice.password };

describe("web console administration pages (Keycloak, headless Chromium)", () => {
  let kc: KeycloakService;
  let browser: Browser;

  before(async () => {
    await ensureConsoleBuilt();
    kc = await startKeycloakService();
    await seedKeycloakUsers(kc.admin);
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await kc?.stop();
  });

  it("users are a read-only list with a link to Keycloak's admin console", async () => {
    const watched = await watchedContext(browser);
    try {
      const page = watched.page;
      await signInToConsole(page, kc.base, alice, "/console/users");
      await waitForHeading(page, "Users and API keys");
      const table = page.getByRole("table", { name: "Users who may sign in" });
      await table.waitFor();
      const text = await table.innerText();
      assert.match(text, /alice\s+admin/);
      assert.match(text, /bob\s+viewer\s+storefront-web/);
      const link = page.getByRole("link", { name: "Open Keycloak's admin console (users)" });
      assert.equal(
        await link.getAttribute("href"),
        `${kc.keycloak.url}/admin/master/console/#/${kc.realm}/users`,
      );
      assert.equal(await page.getByRole("button", { name: "Add user" }).count(), 0, "no add form");
      assert.equal(await page.getByRole("button", { name: /^Remove / }).count(), 0, "no remove button");
      await auditAccessibility(page, "the Users page (Keycloak)");
      await screenshot(page, "users-keycloak");
      watched.assertClean();
    } finally {
      await watched.close();
    }
  });

  it("a CIMD policy created from a preset in the console is a client policy of the realm", async () => {
    const watched = await watchedContext(browser);
    try {
      const page = watched.page;
      await signInToConsole(page, kc.base, alice, "/console/cimd-policies");
      await waitForHeading(page, "CIMD client policies");
      await page.getByLabel("From").selectOption("vscode");
      await page.getByRole("button", { name: "Create", exact: true }).click();
      await page.getByRole("heading", { name: "vscode", level: 3 }).waitFor();
      const policies = (await kc.admin.clientPolicies.listPolicies({ includeGlobalPolicies: false }))
        .policies;
      assert.deepEqual(policies?.find((p) => p.name === "cimd-policy-vscode")?.profiles, [
        "cimd-profile-vscode",
      ]);
      await auditAccessibility(page, "the CIMD client policies page (Keycloak)");
      watched.assertClean();
    } finally {
      await watched.close();
    }
  });
});
