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
import { createDemoStore } from "../support/demo-store.ts";
import { USERS } from "../support/idp-service.ts";
import {
  type KeycloakService,
  seedKeycloakUsers,
  startKeycloakService,
} from "../support/keycloak-service.ts";
import type { TestStore } from "../support/stores.ts";

/**
 * The web console with Keycloak as the identity provider (real Keycloak, provisioned at start-up with
 * the console's client): sign-in on Keycloak's login page, admin and viewer rights from the exchanged
 * platform token, the Status page, the CSRF refusal, and sign-out ending the Keycloak session.
 */
const alice = { username: "alice", password: USERS.alice.password };
const bob = { username: "bob", password: USERS.bob.password };

describe("web console (Keycloak, headless Chromium)", () => {
  let store: TestStore;
  let kc: KeycloakService;
  let browser: Browser;

  before(async () => {
    await ensureConsoleBuilt();
    store = await createDemoStore("sqlite");
    kc = await startKeycloakService({ store });
    await seedKeycloakUsers(kc.admin);
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await kc?.stop();
    await store?.drop();
  });

  it("start-up creates the console's client in the realm: public, PKCE S256, the gateway's callback only", async () => {
    const [client] = await kc.admin.clients.find({ clientId: "imaging-console", max: 1 });
    assert.ok(client, "client imaging-console exists");
    assert.equal(client.publicClient, true);
    assert.equal(client.attributes?.["pkce.code.challenge.method"], "S256");
    assert.deepEqual(client.redirectUris, [`${kc.base}/console/callback`]);
  });

  it("an admin signs in on Keycloak's page, back on the page asked for; Status shows every part up", async () => {
    const watched = await watchedContext(browser);
    try {
      const page = watched.page;
      await signInToConsole(page, kc.base, alice, "/console/status");
      assert.equal(new URL(page.url()).pathname, "/console/status");
      await waitForHeading(page, "Status");
      const parts = page.getByRole("table", { name: "Health of each part" });
      await parts.waitFor();
      const text = await parts.innerText();
      assert.match(text, /Identity provider \(Keycloak\)\s+Up/);
      assert.doesNotMatch(text, /\bDown\b/);
      await page.getByRole("button", { name: "Run the checks" }).click();
      await page.getByRole("table", { name: "Doctor checks" }).waitFor({ timeout: 60_000 });
      await auditAccessibility(page, "the Status page (Keycloak)");
      await screenshot(page, "status-keycloak");
      watched.assertClean();
    } finally {
      await watched.close();
    }
  });

  it("a viewer sees only granted applications; admin data is refused by the REST API", async () => {
    const watched = await watchedContext(browser);
    try {
      const page = watched.page;
      await signInToConsole(page, kc.base, bob, "/console/connect");
      await waitForHeading(page, "Connect an AI client");
      const answers = await page.evaluate(async () => {
        const session = (await (await fetch("/console/session")).json()) as {
          csrfToken: string;
          isAdmin: boolean;
        };
        const apps = await fetch("/console/api/applications");
        const doctor = await fetch("/console/api/admin/doctor", {
          method: "POST",
          headers: { "x-csrf-token": session.csrfToken },
        });
        const noCsrf = await fetch("/console/api/admin/doctor", { method: "POST" });
        return {
          isAdmin: session.isAdmin,
          apps: JSON.stringify(await apps.json()),
          doctor: doctor.status,
          noCsrf: noCsrf.status,
        };
      });
      assert.equal(answers.isAdmin, false);
      assert.match(answers.apps, /storefront-web/);
      assert.doesNotMatch(answers.apps, /payments-service|claims-portal/);
      assert.equal(answers.doctor, 403);
      assert.equal(answers.noCsrf, 403, "no change without the CSRF token");
      watched.assertClean();
    } finally {
      await watched.close();
    }
  });

  it("sign-out ends the console session and the Keycloak session", async () => {
    const watched = await watchedContext(browser);
    try {
      const page = watched.page;
      await signInToConsole(page, kc.base, alice, "/console/status");
      await page.getByRole("button", { name: "Sign out" }).click();
      // Keycloak ends its session at once when the id_token_hint names it (no confirmation page).
      await page.waitForURL((url) => url.pathname === "/console/signed-out", { timeout: 20_000 });
      await page.goto(`${kc.base}/`);
      await page.locator('input[name="password"]').waitFor({ timeout: 10_000 });
      watched.assertClean();
    } finally {
      await watched.close();
    }
  });
});
