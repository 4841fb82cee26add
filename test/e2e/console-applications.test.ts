/// <reference lib="dom" />
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Browser, Page } from "playwright-core";
import { createApiKey } from "../../src/domain/api-keys.ts";
import { ingestAnalysis } from "../../src/domain/package-facts.ts";
import { loadDemo } from "../../src/scanner/demo/load-demo.ts";
import {
  auditAccessibility,
  ensureConsoleBuilt,
  launchBrowser,
  screenshot,
  signInToConsole,
  type WatchedContext,
  waitForHeading,
  watchedContext,
} from "../support/console-browser.ts";
import { FIXTURE, loadFixture, loadPortalFixture } from "../support/fixture.ts";
import { type IdpService, seedUsers, startIdpService, USERS } from "../support/idp-service.ts";
import { lodashAnalysis } from "../support/lodash-analysis.ts";
import { createTestStore, type TestStore } from "../support/stores.ts";

/**
 * The console's Applications pages in headless Chromium against the real service (embedded identity
 * provider, SQLite): every page shows what the REST API answers for the same parameters, the viewer
 * sees only granted applications, paging, the "as of" date, 360 px and desktop widths, the keyboard.
 */
const alice = { username: "alice", password: USERS.alice.password };
const bob = { username: "bob", password: USERS.bob.password };

/** The rows of the table whose caption contains `caption`, each as its cells' trimmed texts. */
async function tableRows(page: Page, caption: string): Promise<string[][]> {
  const table = page.locator("table", { has: page.locator("caption", { hasText: caption }) });
  await table.waitFor({ timeout: 15_000 });
  return table
    .locator("tbody tr")
    .evaluateAll((rows) =>
      rows.map((row) => [...row.querySelectorAll("th, td")].map((cell) => (cell.textContent ?? "").trim())),
    );
}

const SCOPES: Record<string, string> = {
  lodash: "production",
  "lodash.defaultsdeep": "dev",
  "lodash-es": "optional",
  "org.apache.logging.log4j:log4j-core": "test",
  "@babel/traverse": "dev",
};

describe("console Applications pages (embedded identity provider, headless Chromium)", () => {
  let store: TestStore;
  let idp: IdpService;
  let browser: Browser;
  let apiKey: string;
  let admin: WatchedContext;

  /** The REST API's answer for the same question, asked with an administrator's API key. */
  const rest = async <T>(path: string): Promise<T> => {
    const response = await fetch(`${idp.base}/rest${path}`, { headers: { "x-api-key": apiKey } });
    assert.equal(response.status, 200, await response.clone().text());
    return (await response.json()) as T;
  };
  const ecosystemsOf = async (app: string, name: string) =>
    (await rest<{ name: string; ecosystem: string }[]>(`/applications/${app}/packages?limit=1000&q=${name}`))
      .filter((p) => p.name === name)
      .map((p) => p.ecosystem);
  const open = async (path: string, heading: string | RegExp, page = admin.page) => {
    await page.goto(`${idp.base}${path}`);
    await waitForHeading(page, heading);
  };

  before(async () => {
    await ensureConsoleBuilt();
    store = await createTestStore("sqlite");
    idp = await startIdpService(store, {
      seed: async (handle) => {
        await loadDemo(handle.db);
        await loadFixture(handle.db);
        await loadPortalFixture(handle.db);
        // One analysis whose packages carry the scopes their package managers give them.
        const scoped = lodashAnalysis("2024-03-01T00:00:00Z", true);
        await ingestAnalysis(handle.db, "scoped", {
          ...scoped,
          application: "scoped",
          packages: scoped.packages.map((p) => ({ ...p, scope: SCOPES[p.name] })),
        } as never);
        await seedUsers(handle.db);
        apiKey = (await createApiKey(handle.db, { user: "checker", role: "admin", applications: [] })).key;
      },
    });
    browser = await launchBrowser();
    admin = await watchedContext(browser);
    await signInToConsole(admin.page, idp.base, alice, "/console/applications");
  });
  after(async () => {
    await admin?.close();
    await browser?.close();
    await idp?.stop();
    await store?.drop();
  });

  it("lists every application to an administrator, as the REST API does", async () => {
    await open("/console/applications", "Applications");
    const expected = await rest<{ name: string; analysisCount: number }[]>("/applications?limit=50");
    const rows = await tableRows(admin.page, "Applications you may read");
    assert.deepEqual(
      rows.map((r) => [r[0]?.replace(/\s*demo$/, ""), r[2]]),
      expected.map((a) => [a.name, String(a.analysisCount)]),
    );
    assert.ok(expected.length >= 5, "demo applications and both fixtures are listed");
    await auditAccessibility(admin.page, "the applications list");
    await screenshot(admin.page, "applications");
    admin.assertClean();
  });

  it("the overview shows counts, the gate verdict, the severity chart with its table, and the timeline", async () => {
    await open("/console/applications/portal", "Application portal");
    const detail = await rest<{ counts: Record<string, number> }>("/applications/portal");
    await admin.page.locator("dl.counts").waitFor();
    const counts = await admin.page
      .locator("dl.counts > div")
      .evaluateAll((divs) =>
        divs.map((d) => [d.querySelector("dt")?.textContent, d.querySelector("dd")?.textContent]),
      );
    assert.deepEqual(counts, [
      ["Packages", String(detail.counts.packages)],
      ["Vulnerable packages", String(detail.counts.vulnerablePackages)],
      ["CVEs", String(detail.counts.vulnerabilities)],
      ["External objects", String(detail.counts.externalObjects)],
      ["References", String(detail.counts.references)],
    ]);
    // The chart is an image with a text alternative; its numbers are the REST history's.
    const chart = admin.page.locator('figure.chart svg[role="img"]');
    await chart.waitFor();
    assert.match((await chart.locator("desc").textContent()) ?? "", /2024-02-01: 2 vulnerable packages/);
    assert.equal(await chart.locator("rect").count(), 5, "one bar segment per (analysis, severity) present");
    const history = await rest<
      { analysis: { dateTime: string }; vulnerablePackagesBySeverity: Record<string, number> }[]
    >("/applications/portal/analyses");
    const rows = await tableRows(admin.page, "Vulnerable packages by severity");
    assert.deepEqual(
      rows.map((r) => r.slice(0, 6)),
      history.map((h) => [
        h.analysis.dateTime.slice(0, 10),
        ...["CRITICAL", "HIGH", "MEDIUM", "LOW", "UNKNOWN"].map((s) =>
          String(h.vulnerablePackagesBySeverity[s]),
        ),
      ]),
    );
    assert.deepEqual(
      rows.map((r) => r.slice(1, 6)),
      [
        ["0", "1", "1", "0", "0"],
        ["1", "0", "1", "0", "0"],
        ["0", "1", "0", "0", "0"],
      ],
    );
    // The latest analysis (March) passes every enabled rule; the timeline says February failed.
    const evaluation = await rest<{ verdict: string }>("/applications/portal/gates/evaluation");
    assert.equal(evaluation.verdict, "pass");
    assert.match(
      (await admin.page.locator("p", { hasText: "Verdict on the analysis" }).textContent()) ?? "",
      /PASS/,
    );
    await admin.page.locator("ol.timeline > li .verdict").nth(2).waitFor();
    const timeline = await admin.page.locator("ol.timeline > li").allTextContents();
    assert.equal(timeline.length, 3);
    assert.match(timeline[0] ?? "", /^2024-03-01 00:00 UTC.*gate pass/);
    assert.match(
      timeline[1] ?? "",
      /2024-02-01 00:00 UTC.*gate fail \(no-referenced-severe-cve, no-unfixable-vulnerability\)/,
    );
    await auditAccessibility(admin.page, "the application overview");
    await screenshot(admin.page, "application");
    admin.assertClean();
  });

  it("the CVE list matches the REST answer and filters by severity", async () => {
    type Cve = { id: string; severity: string; affectedPackageCount: number };
    // The demo's payments-service in January 2024: real advisories (log4j) against real versions (the
    // demo's later analyses upgrade them away). The page's "as of" day maps to the end of that day.
    const app = "payments-service";
    const date = "2024-01-15T23:59:59Z";
    const all = await rest<Cve[]>(`/applications/${app}/insights/cve?limit=50&date=${date}`);
    assert.ok(all.length > 1, "the demo application had CVEs then");
    await open(`/console/applications/${app}/cves?date=2024-01-15`, `CVEs of ${app}`);
    const rows = await tableRows(admin.page, "CVEs, most severe first");
    assert.deepEqual(
      rows.map((r) => [r[0]?.split(/\s/)[0], r[1], r[3]]),
      all.map((c) => [c.id, c.severity, String(c.affectedPackageCount)]),
    );
    await auditAccessibility(admin.page, "the CVE list");
    await screenshot(admin.page, "cves");
    const severity = all.at(-1)?.severity as string;
    await admin.page.getByLabel(severity, { exact: true }).check();
    await admin.page.waitForURL(new RegExp(`severity=${severity}`));
    const kept = await rest<Cve[]>(
      `/applications/${app}/insights/cve?limit=50&date=${date}&severity=${severity}`,
    );
    assert.ok(kept.length > 0 && kept.length < all.length, "the filter keeps some CVEs, not all");
    await admin.page.waitForFunction((n) => document.querySelectorAll("tbody tr").length === n, kept.length);
    const filtered = await tableRows(admin.page, "CVEs, most severe first");
    assert.deepEqual(
      filtered.map((r) => [r[0]?.split(/\s/)[0], r[1]]),
      kept.map((c) => [c.id, severity]),
    );
    admin.assertClean();
  });

  it("a CVE's occurrences match the REST answer for the same date, page by page", async () => {
    type Occurrence = { name: string; version: string; scope: string; objects: { fullName: string }[] };
    const shown = async () =>
      (await tableRows(admin.page, `Packages affected by ${FIXTURE.cve}`)).map((r) => [
        r[0],
        r[1],
        r[2],
        r[7],
      ]);
    const expected = (occurrences: Occurrence[]) =>
      occurrences.map((o) => [
        o.name,
        o.version,
        o.scope,
        o.objects.map((x) => `${x.fullName} JavaScript Function`).join(""),
      ]);
    const base = `/applications/shop/insights/cve/${FIXTURE.cve}/occurrences`;

    await open(`/console/applications/shop/cves/${FIXTURE.cve}?limit=5`, `${FIXTURE.cve} in shop`);
    const latest = await rest<Occurrence[]>(`${base}?limit=5&skip=0`);
    assert.deepEqual(await shown(), expected(latest));
    assert.equal(
      latest[0]?.name,
      "lib-02",
      "lib-01 was upgraded to the fixed version in the latest analysis",
    );
    await auditAccessibility(admin.page, "the occurrences");
    await screenshot(admin.page, "occurrences");

    await admin.page.getByRole("button", { name: "Next" }).first().click();
    await admin.page.waitForURL(/skip=5/);
    await admin.page.waitForFunction(
      () => document.querySelector("table.occurrences tbody tr th")?.textContent === "lib-07",
    );
    assert.deepEqual(await shown(), expected(await rest<Occurrence[]>(`${base}?limit=5&skip=5`)));

    // As of 2024-02-01: the first analysis, where lib-01 1.0.0 is still affected; paging starts over.
    await admin.page.getByLabel("As of (UTC day)").fill("2024-02-01");
    await admin.page.waitForURL(/date=2024-02-01/);
    await admin.page.waitForFunction(
      () => document.querySelector("table.occurrences tbody tr th")?.textContent === "lib-01",
    );
    const asOf = await rest<Occurrence[]>(`${base}?limit=5&skip=0&date=2024-02-01T23:59:59Z`);
    assert.deepEqual(await shown(), expected(asOf));
    assert.deepEqual(
      asOf.map((o) => `${o.name}@${o.version}`),
      ["lib-01@1.0.0", "lib-02@1.0.0", "lib-03@1.0.0", "lib-04@1.0.0", "lib-05@1.0.0"],
    );
    const next = async (skip: number, first: string) => {
      await admin.page.getByRole("button", { name: "Next" }).first().click();
      await admin.page.waitForURL(new RegExp(`skip=${skip}`));
      await admin.page.waitForFunction(
        (name) => document.querySelector("table.occurrences tbody tr th")?.textContent === name,
        first,
      );
    };
    await next(5, "lib-06");
    await next(10, "lib-11");
    assert.deepEqual(
      await shown(),
      expected(await rest<Occurrence[]>(`${base}?limit=5&skip=10&date=2024-02-01T23:59:59Z`)),
    );
    assert.equal(
      await admin.page.getByRole("button", { name: "Next" }).first().isDisabled(),
      true,
      "the last page has no next",
    );
    admin.assertClean();
  });

  it("a CVE's page shows the advisory and, when the latest analysis is unaffected, the last that was", async () => {
    await open(
      "/console/applications/payments-service/cves/CVE-2021-44228",
      "CVE-2021-44228 in payments-service",
    );
    const advisory = await rest<{ summary: string; references: { url: string }[] }>(
      "/vulnerabilities/CVE-2021-44228",
    );
    await admin.page.locator("p.advisory-summary").waitFor();
    assert.equal(await admin.page.locator("p.advisory-summary").innerText(), advisory.summary);
    const facts = await admin.page.locator("dl.pairs dd").allTextContents();
    assert.deepEqual(facts, ["CRITICAL", "10", "GHSA-jfh8-c2jp-5v3q", "2021-12-10 00:40 UTC"]);
    assert.deepEqual(await tableRows(admin.page, "Affected packages and versions"), [
      [
        "org.apache.logging.log4j:log4j-core",
        "maven",
        ">= 2.0-beta9, < 2.3.1; >= 2.4, < 2.12.2; >= 2.13.0, < 2.15.0",
        "2.3.1, 2.12.2, 2.15.0",
      ],
    ]);
    assert.deepEqual(
      await admin.page
        .locator("ul.references a")
        .evaluateAll((links) => links.map((a) => a.getAttribute("href"))),
      advisory.references.map((r) => r.url),
    );
    // The latest analysis (log4j-core 2.17.1) is not affected: the page names the last one that was.
    const status = admin.page.locator("p.cve-status");
    await status.waitFor();
    assert.match(
      await status.innerText(),
      /uses no version CVE-2021-44228 affects\. The last analysis that did: 2024-01-15/,
    );
    assert.match(await admin.page.locator("main").innerText(), /CVE-2021-44228 affects none of the packages/);
    await auditAccessibility(admin.page, "the CVE page of an unaffected analysis");
    await screenshot(admin.page, "cve-unaffected-latest");
    await status.getByRole("link").click();
    await admin.page.waitForURL(/date=2024-01-15T/);
    const rows = await tableRows(admin.page, "Packages affected by CVE-2021-44228");
    assert.deepEqual(
      rows.map((r) => [r[0], r[1]]),
      [["org.apache.logging.log4j:log4j-core", "2.14.1"]],
    );
    assert.match(await admin.page.locator("p.cve-status").innerText(), /uses 1 affected package version/);
    admin.assertClean();
  });

  it("a CVE no imported advisory names is shown as unknown, never as unaffected", async () => {
    await open(
      "/console/applications/payments-service/cves/CVE-2099-424242",
      "CVE-2099-424242 in payments-service",
    );
    const alert = admin.page.getByRole("alert");
    await alert.waitFor();
    const text = await alert.innerText();
    assert.match(text, /Unknown vulnerability/);
    assert.match(
      text,
      /No advisory known for CVE-2099-424242; advisories last imported at \d{4}-\d{2}-\d{2}T/,
    );
    assert.doesNotMatch(await admin.page.locator("main").innerText(), /affects none/);
    await auditAccessibility(admin.page, "the page of an unknown CVE");
    await screenshot(admin.page, "cve-unknown");
    admin.assertClean();
  });

  it("package detail shows the facts and the application objects using it", async () => {
    await open("/console/applications/portal/packages/churn?ecosystem=npm", "churn in portal");
    await admin.page.locator("dl.pairs").first().waitFor();
    const facts = await admin.page.locator("dl.pairs dd").allTextContents();
    assert.deepEqual(facts.slice(0, 2), ["npm", "1.15.0"]);
    const interactions = await rest<
      { source: { fullName: string }; target: { fullName: string }; version: string }[]
    >("/applications/portal/interactions?package=churn&ecosystem=npm");
    const rows = await tableRows(admin.page, "References to the package's external objects");
    assert.deepEqual(
      rows.map((r) => [r[0], r[1], r[3]]),
      interactions.map((i) => [i.target.fullName, i.version, i.source.fullName]),
    );
    assert.equal(rows.length, 2);
    await auditAccessibility(admin.page, "the package detail");
    await screenshot(admin.page, "package");

    // A name used in two ecosystems: both versions, and a link per ecosystem to its references.
    await open("/console/applications/twins/packages/twin", "twin in twins");
    await admin.page.locator("dl.pairs").nth(1).waitFor();
    assert.deepEqual(
      await admin.page.locator("dl.pairs > div:first-child dd").allTextContents(),
      await ecosystemsOf("twins", "twin"),
    );
    assert.equal((await ecosystemsOf("twins", "twin")).length, 2);
    await admin.page.getByRole("link", { name: "the maven package" }).click();
    await admin.page.waitForURL(/ecosystem=maven/);
    const maven = await tableRows(admin.page, "References to the package's external objects");
    assert.deepEqual(
      maven.map((r) => [r[0], r[3]]),
      [["twin.java", "twins.main"]],
    );
    admin.assertClean();
  });

  it("packages show their scope and filter by it, as the REST API's scope parameter does", async () => {
    type Use = { name: string; version: string; scope: string };
    const shown = async () => (await tableRows(admin.page, "Packages in use")).map((r) => [r[0], r[2], r[3]]);
    const expected = (list: Use[]) => list.map((p) => [p.name, p.version, p.scope]);
    await open("/console/applications/scoped/packages", "Packages of scoped");
    const all = await rest<Use[]>("/applications/scoped/packages?limit=50");
    assert.deepEqual(await shown(), expected(all));
    assert.deepEqual(all.map((p) => [p.name, p.scope]).sort(), Object.entries(SCOPES).sort());
    await auditAccessibility(admin.page, "the packages with scopes");

    await admin.page.getByLabel("Scope", { exact: true }).selectOption("development");
    await admin.page.waitForURL(/scope=development/);
    await admin.page.waitForFunction(() => document.querySelectorAll("tbody tr").length === 3);
    const development = await rest<Use[]>("/applications/scoped/packages?limit=50&scope=dev,test");
    assert.deepEqual(await shown(), expected(development));
    assert.deepEqual(development.map((p) => p.name).sort(), [
      "@babel/traverse",
      "lodash.defaultsdeep",
      "org.apache.logging.log4j:log4j-core",
    ]);

    await admin.page.getByLabel("Scope", { exact: true }).selectOption("production");
    await admin.page.waitForURL(/scope=production/);
    await admin.page.waitForFunction(() => document.querySelectorAll("tbody tr").length === 2);
    assert.deepEqual(
      (await shown()).map((r) => [r[0], r[2]]),
      [
        ["lodash", "production"],
        ["lodash-es", "optional"],
      ],
    );
    await screenshot(admin.page, "packages-scope");
    admin.assertClean();
  });

  it("compares two analyses chosen in the page", async () => {
    await open("/console/applications/portal/compare", "Compare analyses of portal");
    await admin.page.getByLabel("Baseline analysis").selectOption("2024-01-01T00:00:00Z");
    await admin.page.getByLabel("Compared analysis").selectOption("2024-02-01T00:00:00Z");
    await admin.page.waitForURL(/from=2024-01-01.*to=2024-02-01|to=2024-02-01.*from=2024-01-01/);
    const expected = await rest<{
      vulnerablePackages: { added: { name: string }[]; removed: { name: string }[] };
    }>("/applications/portal/compare?from=2024-01-01T00:00:00Z&to=2024-02-01T00:00:00Z");
    const section = admin.page.locator('section[aria-label="Vulnerable packages"]');
    await section.locator("h2", { hasText: "1 added, 1 removed" }).waitFor();
    const added = await section.locator("div > div").nth(0).locator("li").allTextContents();
    const removed = await section.locator("div > div").nth(1).locator("li").allTextContents();
    assert.deepEqual(
      added.map((a) => a.split("@")[0]),
      expected.vulnerablePackages.added.map((p) => p.name),
    );
    assert.deepEqual(added, ["org.example:core@1.1 (CVE-2099-3001, CVE-2099-3002)"]);
    assert.deepEqual(removed, ["unused-vuln@1.0.0 (CVE-2099-2003)"]);
    await auditAccessibility(admin.page, "the comparison");
    await screenshot(admin.page, "compare");
    admin.assertClean();
  });

  it("is keyboard navigable: from the list to an application and its CVEs without a pointer", async () => {
    await open("/console/applications", "Applications");
    const focusLink = async (text: string) => {
      for (let i = 0; i < 60; i++) {
        await admin.page.keyboard.press("Tab");
        const focused = await admin.page.evaluate(() => document.activeElement?.textContent?.trim());
        if (focused === text) return;
      }
      assert.fail(`no focusable element named '${text}' within 60 tabs`);
    };
    await focusLink("portal");
    await admin.page.keyboard.press("Enter");
    await waitForHeading(admin.page, "Application portal");
    await focusLink("CVEs");
    await admin.page.keyboard.press("Enter");
    await waitForHeading(admin.page, "CVEs of portal");
    admin.assertClean();
  });

  it("fits 360 px wide: no page scrolls sideways (wide tables scroll in their own box)", async () => {
    const narrow = await watchedContext(browser, { viewport: { width: 360, height: 800 } });
    try {
      await signInToConsole(narrow.page, idp.base, alice, "/console/applications");
      for (const [path, heading] of [
        ["/console/applications", "Applications"],
        ["/console/applications/portal", "Application portal"],
        ["/console/applications/payments-service/cves", "CVEs of payments-service"],
        [`/console/applications/shop/cves/${FIXTURE.cve}`, `${FIXTURE.cve} in shop`],
        ["/console/applications/portal/packages", "Packages of portal"],
        ["/console/applications/portal/compare", "Compare analyses of portal"],
      ] as const) {
        await open(path, heading, narrow.page);
        await narrow.page.waitForLoadState("networkidle");
        assert.equal(
          await narrow.page.locator(".loading, .error-box").count(),
          0,
          `${path} rendered its data`,
        );
        const width = await narrow.page.evaluate(() => document.documentElement.scrollWidth);
        assert.ok(width <= 360, `${path} is ${width} px wide at 360 px`);
      }
      await open("/console/applications/portal", "Application portal", narrow.page);
      await screenshot(narrow.page, "application-360px");
      narrow.assertClean();
    } finally {
      await narrow.close();
    }
  });

  it("a viewer sees only the granted applications; another's is refused by the REST API", async () => {
    const viewer = await watchedContext(browser);
    try {
      await signInToConsole(viewer.page, idp.base, bob, "/console/applications");
      await waitForHeading(viewer.page, "Applications");
      const rows = await tableRows(viewer.page, "Applications you may read");
      assert.deepEqual(
        rows.map((r) => r[0]?.replace(/\s*demo$/, "")),
        USERS.bob.applications,
      );
      await open("/console/applications/storefront-web", "Application storefront-web", viewer.page);
      await viewer.page.locator("dl.counts").waitFor();
      await open("/console/applications/portal", "Application portal", viewer.page);
      const alert = viewer.page.locator(".error-box").first();
      await alert.waitFor();
      assert.match((await alert.textContent()) ?? "", /not allowed to read application 'portal'/);
      // The browser's own request to the API is refused too, not only hidden.
      const direct = await viewer.page.evaluate(async () => {
        const r = await fetch("/console/api/applications/portal/insights/cve?limit=5");
        return r.status;
      });
      assert.equal(direct, 403);
      await screenshot(viewer.page, "applications-viewer-refused");
      // The refused requests' 403s are the expected answers the page shows, not script errors.
      assert.deepEqual(viewer.foreignRequests, []);
      assert.deepEqual(
        viewer.consoleErrors.filter((e) => !/status of 403/.test(e)),
        [],
      );
    } finally {
      await viewer.close();
    }
  });
});
