import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { sql } from "kysely";
import type { Browser } from "playwright-core";
import { loadDemo } from "../../src/scanner/demo/load-demo.ts";
import { openStore } from "../../src/store/database.ts";
import {
  auditAccessibility,
  ensureConsoleBuilt,
  firstPageInteractiveMs,
  launchBrowser,
  screenshot,
  signInToConsole,
  waitForHeading,
  watchedContext,
} from "../support/console-browser.ts";
import { type IdpService, seedUsers, startIdpService, USERS } from "../support/idp-service.ts";
import { createTestStore, type TestStore } from "../support/stores.ts";

/**
 * The web console with the embedded identity provider, in headless Chromium against the real service:
 * sign-in as admin and as viewer, the Status and Connect pages, sign-out, CSRF refusal, redirects.
 */
const alice = { username: "alice", password: USERS.alice.password };
const bob = { username: "bob", password: USERS.bob.password };

describe("web console (embedded identity provider, headless Chromium)", () => {
  let store: TestStore;
  let idp: IdpService;
  let browser: Browser;

  before(async () => {
    await ensureConsoleBuilt();
    store = await createTestStore("sqlite");
    idp = await startIdpService(store, {
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
    await store?.drop();
  });

  it("unauthenticated, / sends the browser to sign-in and back to the page asked for", async () => {
    const first = await fetch(`${idp.base}/console/connect?x=1`, { redirect: "manual" });
    assert.equal(first.status, 302);
    assert.equal(
      first.headers.get("location"),
      `/console/sign-in?return_to=${encodeURIComponent("/console/connect?x=1")}`,
    );
    const signIn = await fetch(`${idp.base}${first.headers.get("location")}`, { redirect: "manual" });
    assert.equal(signIn.status, 302);
    const authorize = new URL(signIn.headers.get("location") as string);
    assert.equal(`${authorize.origin}${authorize.pathname}`, `${idp.issuer}/auth`);
    assert.equal(authorize.searchParams.get("client_id"), "imaging-console");
    assert.equal(authorize.searchParams.get("code_challenge_method"), "S256");
    assert.equal(authorize.searchParams.get("redirect_uri"), `${idp.base}/console/callback`);

    const watched = await watchedContext(browser);
    try {
      await signInToConsole(watched.page, idp.base, alice, "/console/connect?x=1");
      const url = new URL(watched.page.url());
      assert.equal(`${url.pathname}${url.search}`, "/console/connect?x=1", "back on the page asked for");
      await waitForHeading(watched.page, "Connect an AI client");
      watched.assertClean();
    } finally {
      await watched.close();
    }
  });

  it("an open redirect is refused: return_to to another host lands on the console", async () => {
    const answer = await fetch(
      `${idp.base}/console/sign-in?return_to=${encodeURIComponent("//evil.example/x")}`,
      {
        redirect: "manual",
      },
    );
    assert.equal(answer.status, 302);
    const watched = await watchedContext(browser);
    try {
      await watched.page.goto(
        `${idp.base}/console/sign-in?return_to=${encodeURIComponent("https://evil.example/")}`,
      );
      await watched.page.locator('input[name="username"]').fill(alice.username);
      await watched.page.locator('input[name="password"]').fill(alice.password);
      await watched.page.locator('input[name="password"]').press("Enter");
      await waitForHeading(watched.page, "Status");
      assert.equal(new URL(watched.page.url()).origin, idp.base);
      assert.equal(new URL(watched.page.url()).pathname, "/");
    } finally {
      await watched.close();
    }
  });

  it("the session cookie is HttpOnly and SameSite=Lax; pages have a strict CSP; assets are immutable", async () => {
    const watched = await watchedContext(browser);
    try {
      const page = watched.page;
      let indexHeaders: Record<string, string> = {};
      const assetHeaders: Record<string, string>[] = [];
      page.on("response", (response) => {
        const path = new URL(response.url()).pathname;
        if (path === "/" && response.status() === 200) indexHeaders = response.headers();
        if (path.startsWith("/console/assets/")) assetHeaders.push(response.headers());
      });
      await signInToConsole(page, idp.base, alice, "/");
      const cookie = (await watched.context.cookies()).find((c) => c.name === "imaging_console");
      assert.ok(cookie, "the console's session cookie is set");
      assert.equal(cookie.httpOnly, true);
      assert.equal(cookie.sameSite, "Lax");
      assert.equal(cookie.secure, false, "Secure only on https");
      assert.match(indexHeaders["content-security-policy"] ?? "", /script-src 'self'/);
      assert.doesNotMatch(indexHeaders["content-security-policy"] ?? "", /unsafe-inline|https?:/);
      assert.equal(indexHeaders["cache-control"], "no-cache");
      assert.ok(assetHeaders.length >= 2, "scripts and the stylesheet come from /console/assets/");
      for (const headers of assetHeaders) assert.match(headers["cache-control"] ?? "", /immutable/);
      assert.equal(
        await page.evaluate("document.cookie.includes('imaging_console')"),
        false,
        "not readable by scripts",
      );
      watched.assertClean();
    } finally {
      await watched.close();
    }
  });

  it("the admin's Status page shows every part up, the version, base_url, and runs the doctor checks", async () => {
    const watched = await watchedContext(browser);
    try {
      const page = watched.page;
      await signInToConsole(page, idp.base, alice, "/console/status");
      await waitForHeading(page, "Status");
      const parts = page.getByRole("table", { name: "Health of each part" });
      await parts.waitFor();
      for (const part of ["Gateway", "REST API", "Analysis MCP server", "Gatekeeper MCP server", "Store"]) {
        await assertRowState(parts, part, "Up");
      }
      await assertRowState(parts, "Identity provider (embedded)", "Up");
      assert.match(
        await page.locator("dl.facts").innerText(),
        new RegExp(idp.base.replace(/[.:/]/g, "\\$&")),
      );
      await page.getByRole("button", { name: "Run the checks" }).click();
      const checks = page.getByRole("table", { name: "Doctor checks" });
      await checks.waitFor({ timeout: 30_000 });
      const text = await checks.innerText();
      assert.match(text, /challenge-mcp/, "the doctor's checks are listed by id");
      assert.match(text, /Pass/);
      // Runs are not piled up: a second request right after gets the same run (same checkedAt).
      const [first, second] = await page.evaluate(async () => {
        const { csrfToken } = (await (await fetch("/console/session")).json()) as { csrfToken: string };
        const run = async () =>
          (
            (await (
              await fetch("/console/api/admin/doctor", {
                method: "POST",
                headers: { "x-csrf-token": csrfToken },
              })
            ).json()) as { checkedAt: string }
          ).checkedAt;
        return [await run(), await run()];
      });
      assert.ok(first && !Number.isNaN(Date.parse(first)));
      assert.equal(second, first);
      await auditAccessibility(page, "the Status page");
      await screenshot(page, "status");
      watched.assertClean();
    } finally {
      await watched.close();
    }
  });

  it("the Connect page gives the exact command and mcp.json entry for this base_url, with copy buttons", async () => {
    const watched = await watchedContext(browser);
    try {
      const page = watched.page;
      await signInToConsole(page, idp.base, alice, "/console/connect");
      await waitForHeading(page, "Connect an AI client");
      const text = await page.locator("main").innerText();
      assert.ok(text.includes(`claude mcp add --transport http --scope user imaging ${idp.base}/mcp`));
      assert.ok(
        text.includes(
          `claude mcp add --transport http --scope user imaging-gatekeeper ${idp.base}/mcp/gatekeeper`,
        ),
      );
      assert.ok(text.includes(`"url": "${idp.base}/mcp"`), "the VS Code mcp.json entry");
      assert.ok(
        text.includes(`${idp.base}/.well-known/oauth-protected-resource/mcp`),
        "other clients: discovery",
      );
      await page.getByRole("button", { name: "Copy Claude Code command for imaging", exact: true }).click();
      await page.getByText("Copied").first().waitFor();
      await auditAccessibility(page, "the Connect page");
      await screenshot(page, "connect");
      watched.assertClean();
    } finally {
      await watched.close();
    }
  });

  it("an admin creates a missing CIMD policy from its preset on the Connect page; a viewer has no such button", async () => {
    const watched = await watchedContext(browser);
    try {
      const page = watched.page;
      await signInToConsole(page, idp.base, alice, "/console/connect");
      await waitForHeading(page, "Connect an AI client");
      const claude = page.getByRole("region", { name: "Claude Code" });
      await claude.getByText("No CIMD policy").waitFor();
      const listed = () =>
        page.evaluate(async () => {
          const answer = await fetch("/console/api/admin/cimd-policies");
          return {
            status: answer.status,
            body: (await answer.json()) as {
              client: string;
              clientId: string;
              enabled: boolean;
              linked: boolean;
            }[],
          };
        });
      const before = await listed();
      assert.equal(before.status, 200);
      assert.equal(
        before.body.some((p) => p.client === "claude-code"),
        false,
        "no Claude Code policy before the click",
      );
      await claude.getByRole("button", { name: "Create the Claude Code policy from its preset" }).click();
      await claude.getByText("CIMD policy exists").waitFor();
      assert.match(await claude.innerText(), /Claude Code can sign in/);
      assert.equal(
        await claude.getByRole("button", { name: /Create the Claude Code policy/ }).count(),
        0,
        "the button is gone once the policy exists",
      );
      // The other client's policy is still missing: only the one clicked was created.
      await page.getByRole("region", { name: "VS Code" }).getByText("No CIMD policy").waitFor();
      const after = await listed();
      assert.equal(after.status, 200);
      const created = after.body.find((p) => p.client === "claude-code");
      assert.ok(created, "GET /rest/admin/cimd-policies lists the new policy");
      assert.equal(created.clientId, "https://claude.ai/oauth/claude-code-client-metadata");
      assert.equal(created.enabled, true);
      assert.equal(created.linked, true);
      watched.assertClean();
    } finally {
      await watched.close();
    }

    const viewer = await watchedContext(browser);
    try {
      const page = viewer.page;
      await signInToConsole(page, idp.base, bob, "/console/connect");
      await waitForHeading(page, "Connect an AI client");
      await page
        .getByText(/set by an administrator/)
        .first()
        .waitFor();
      assert.equal(
        await page.getByRole("button", { name: /policy from its preset/ }).count(),
        0,
        "a viewer has no create-from-preset button",
      );
      viewer.assertClean();
    } finally {
      await viewer.close();
    }
  });

  it("a viewer signs in, sees only granted data and cannot reach admin data (the API refuses)", async () => {
    const watched = await watchedContext(browser);
    try {
      const page = watched.page;
      await signInToConsole(page, idp.base, bob, "/console/status");
      await waitForHeading(page, "Status");
      assert.equal(await page.getByRole("button", { name: "Run the checks" }).count(), 0, "no doctor button");
      const answers = await page.evaluate(async () => {
        const session = (await (await fetch("/console/session")).json()) as {
          csrfToken: string;
          isAdmin: boolean;
          user: string;
        };
        const apps = await fetch("/console/api/applications");
        const doctor = await fetch("/console/api/admin/doctor", {
          method: "POST",
          headers: { "x-csrf-token": session.csrfToken },
        });
        return {
          session: { isAdmin: session.isAdmin, user: session.user },
          apps: { status: apps.status, body: await apps.json() },
          doctor: {
            status: doctor.status,
            type: doctor.headers.get("content-type"),
            body: (await doctor.json()) as { detail: string },
          },
        };
      });
      assert.deepEqual(answers.session, { isAdmin: false, user: "bob" });
      assert.equal(answers.apps.status, 200);
      const names = JSON.stringify(answers.apps.body);
      assert.match(names, /storefront-web/);
      assert.doesNotMatch(names, /payments-service|claims-portal/, "only the granted application");
      assert.equal(answers.doctor.status, 403, "admin data refused by the REST API itself");
      assert.match(answers.doctor.type ?? "", /problem\+json/);
      assert.match(answers.doctor.body.detail, /administrators/);
      watched.assertClean();
    } finally {
      await watched.close();
    }
  });

  it("changes without the session's CSRF token, or from another origin, are refused", async () => {
    const watched = await watchedContext(browser);
    try {
      const page = watched.page;
      await signInToConsole(page, idp.base, alice, "/console/status");
      const answers = await page.evaluate(async () => {
        const noToken = await fetch("/console/api/admin/doctor", { method: "POST" });
        const wrongToken = await fetch("/console/api/admin/doctor", {
          method: "POST",
          headers: { "x-csrf-token": "forged" },
        });
        const signOut = await fetch("/console/sign-out", { method: "POST" });
        return {
          noToken: { status: noToken.status, body: (await noToken.json()) as { detail: string } },
          wrongToken: { status: wrongToken.status, body: (await wrongToken.json()) as { detail: string } },
          signOut: signOut.status,
        };
      });
      assert.equal(answers.noToken.status, 403);
      assert.match(answers.noToken.body.detail, /CSRF/);
      assert.equal(answers.wrongToken.status, 403);
      assert.match(answers.wrongToken.body.detail, /CSRF/);
      assert.equal(answers.signOut, 403, "sign-out without the token is refused too");
      // A cross-site request carrying the cookie (as a browser would send it on a top-level POST) and a token.
      const cookie = (await watched.context.cookies()).find((c) => c.name === "imaging_console");
      const session = (await (
        await fetch(`${idp.base}/console/session`, {
          headers: { cookie: `imaging_console=${cookie?.value}` },
        })
      ).json()) as {
        csrfToken: string;
      };
      const crossSite = await fetch(`${idp.base}/console/api/admin/doctor`, {
        method: "POST",
        headers: {
          cookie: `imaging_console=${cookie?.value}`,
          origin: "https://evil.example",
          "x-csrf-token": session.csrfToken,
        },
      });
      assert.equal(crossSite.status, 403);
      assert.match(((await crossSite.json()) as { detail: string }).detail, /origin/);
      watched.assertClean();
    } finally {
      await watched.close();
    }
  });

  it("an expired access token is refreshed with the refresh token, and the session goes on", async () => {
    const watched = await watchedContext(browser);
    const handle = await openStore({
      databaseUrl: store.databaseUrl,
      sqliteFile: store.sqliteFile,
      migrate: false,
    });
    try {
      const page = watched.page;
      await signInToConsole(page, idp.base, alice, "/console/status");
      const before = await sql<{ access_token: string }>`select access_token from console_sessions`.execute(
        handle.db,
      );
      // The access token's lifetime is over (as after 15 minutes): the next request must refresh it.
      await sql`update console_sessions set access_expires_at = 0`.execute(handle.db);
      const status = await page.evaluate(async () => (await fetch("/console/api/applications")).status);
      assert.equal(status, 200, "the API call succeeds with a refreshed token");
      const afterRows = await sql<{ access_token: string; access_expires_at: number | string }>`
        select access_token, access_expires_at from console_sessions`.execute(handle.db);
      const known = new Set(before.rows.map((r) => r.access_token));
      const refreshed = afterRows.rows.filter((r) => !known.has(r.access_token));
      assert.equal(refreshed.length, 1, "one session got a new access token");
      assert.ok(Number(refreshed[0]?.access_expires_at) > Date.now(), "valid again");
      watched.assertClean();
    } finally {
      await handle.close();
      await watched.close();
    }
  });

  it("sign-out ends the console session and the identity provider's session", async () => {
    const watched = await watchedContext(browser);
    try {
      const page = watched.page;
      await signInToConsole(page, idp.base, alice, "/console/status");
      const cookie = (await watched.context.cookies()).find((c) => c.name === "imaging_console");
      await page.getByRole("button", { name: "Sign out" }).click();
      // The identity provider asks to confirm ending its session (oidc-provider's logout page).
      await page.waitForURL((url) => url.pathname.includes("/session/end"));
      await page.locator('button[autofocus], button[type="submit"]').first().click();
      await page.waitForURL((url) => url.pathname === "/console/signed-out");
      assert.match(await page.locator("h1").innerText(), /Signed out/);
      const old = await fetch(`${idp.base}/console/session`, {
        headers: { cookie: `imaging_console=${cookie?.value}` },
      });
      assert.equal(old.status, 401, "the old session cookie no longer works");
      // Signing in again needs the password: the identity provider's session ended too.
      await page.goto(`${idp.base}/`);
      await page.locator('input[name="password"]').waitFor({ timeout: 10_000 });
      watched.assertClean();
    } finally {
      await watched.close();
    }
  });

  it("first page interactive is measured on loopback (reported in docs/benchmarks.md)", async () => {
    const watched = await watchedContext(browser);
    try {
      await signInToConsole(watched.page, idp.base, alice, "/console/status");
      const samples: number[] = [];
      for (let i = 0; i < 5; i++)
        samples.push(await firstPageInteractiveMs(watched.page, `${idp.base}/console/status`));
      samples.sort((a, b) => a - b);
      process.stdout.write(
        `# console first page interactive (ms): ${samples.map((s) => s.toFixed(0)).join(", ")}\n`,
      );
      assert.ok(samples.every((s) => Number.isFinite(s) && s > 0));
      watched.assertClean();
    } finally {
      await watched.close();
    }
  });

  it("at 360 px wide the Status page is usable and passes the audit", async () => {
    const watched = await watchedContext(browser, { viewport: { width: 360, height: 780 } });
    try {
      await signInToConsole(watched.page, idp.base, alice, "/console/status");
      await watched.page.getByRole("table", { name: "Health of each part" }).waitFor();
      const overflow = (await watched.page.evaluate(
        "document.documentElement.scrollWidth - window.innerWidth",
      )) as number;
      assert.ok(overflow <= 0, `no sideways scrolling of the page (overflow ${overflow}px)`);
      await auditAccessibility(watched.page, "the Status page at 360 px");
      await screenshot(watched.page, "status-360");
      watched.assertClean();
    } finally {
      await watched.close();
    }
  });

  for (const admin of [
    { path: "/console/connect", title: "Connect an AI client", name: "connect" },
    { path: "/console/cimd-policies", title: "CIMD client policies", name: "cimd-policies" },
    { path: "/console/users", title: "Users and API keys", name: "users" },
  ]) {
    it(`at 360 px wide the ${admin.title} page does not scroll sideways and passes the audit`, async () => {
      const watched = await watchedContext(browser, { viewport: { width: 360, height: 780 } });
      try {
        const page = watched.page;
        await signInToConsole(page, idp.base, alice, admin.path);
        await waitForHeading(page, admin.title);
        // The page's data is shown (a table or the Connect page's snippets), with nothing still loading.
        await page.locator("main table, main pre").first().waitFor();
        await page.locator("main form, main .badge").first().waitFor();
        await page.waitForFunction(
          () => !/Loading|Checking/.test(document.querySelector("main")?.textContent ?? ""),
        );
        const overflow = (await page.evaluate(
          "document.documentElement.scrollWidth - window.innerWidth",
        )) as number;
        assert.ok(overflow <= 0, `no sideways scrolling of the page (overflow ${overflow}px)`);
        // Fitting must not come from squeezing text to a letter or a word per line.
        const squeezed = (await page.evaluate(`(() => {
          const lines = (el) => {
            const range = document.createRange();
            range.selectNodeContents(el);
            return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
          };
          const visible = (el) => el.getClientRects().length > 0;
          return [
            ...[...document.querySelectorAll("main dd")]
              .filter((dd) => visible(dd) && dd.textContent.trim().length > 20)
              .filter((dd) => dd.getBoundingClientRect().width < 150)
              .map((dd) => "value " + dd.textContent.slice(0, 40) + " is " + Math.round(dd.getBoundingClientRect().width) + "px wide"),
            ...[...document.querySelectorAll("main button")]
              .filter((b) => visible(b) && lines(b) > 2)
              .map((b) => "button " + b.textContent + " takes " + lines(b) + " lines"),
          ];
        })()`)) as string[];
        assert.deepEqual(squeezed, [], "text keeps a readable width");
        await auditAccessibility(page, `the ${admin.title} page at 360 px`);
        await screenshot(page, `${admin.name}-360`);
        watched.assertClean();
      } finally {
        await watched.close();
      }
    });
  }
});

async function assertRowState(
  table: import("playwright-core").Locator,
  part: string,
  state: string,
): Promise<void> {
  const row = table
    .getByRole("row")
    .filter({ has: table.page().getByRole("cell", { name: part, exact: true }) });
  assert.match(await row.innerText(), new RegExp(`\\b${state}\\b`), `${part} is ${state}`);
}
