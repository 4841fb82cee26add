/**
 * npm run bench:console: how fast the web console's first page becomes interactive on loopback, and how
 * much JavaScript it ships. The real service (embedded identity provider, SQLite, demo data) and
 * Debian's Chromium: an admin signs in once, then each page is loaded
 * - cold: a new browser context holding only the session cookie (no cached assets), as a first visit;
 * - warm: the same context again (assets from the cache: they are immutable).
 * "Interactive" is the moment the page's heading is rendered (the app has started, read the session and
 * drawn the page), read from the page's own clock (performance.now(), from navigation start).
 *
 * Knobs: BENCH_CONSOLE_LOADS (default 20 per page and mode), BENCH_CONSOLE_REPORT (write a JSON report
 * there), BENCH_WRITE_DOCS=1 to write docs/benchmarks.md with other settings than the defaults.
 */
import { writeFileSync } from "node:fs";
import os from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { buildConsole, builtConsole } from "../../scripts/build-console.ts";
import { loadDemo } from "../../src/scanner/demo/load-demo.ts";
import { firstPageInteractiveMs, launchBrowser, signInToConsole } from "../support/console-browser.ts";
import { seedUsers, startIdpService, USERS } from "../support/idp-service.ts";
import { createTestStore } from "../support/stores.ts";
import { knob, round, writeResultsSection } from "./bench-kit.ts";

const ROOT = resolve(fileURLToPath(new URL("../..", import.meta.url)));
const LOADS = knob("BENCH_CONSOLE_LOADS", 20, 1);
const PAGES = [
  { name: "Status", path: "/console/status" },
  { name: "Connect", path: "/console/connect" },
  // A deep link to an application: its page and the chart's code (d3-scale) are a lazily loaded chunk.
  { name: "Application", path: "/console/applications/payments-service" },
];

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;

const log = (line: string) => process.stdout.write(`${line}\n`);

// In the test suite the global setup has built the console: building it again here would delete the
// assets that other test files' gateways serve meanwhile.
const { firstPageJsGzip } =
  (process.env.IMAGING_CONSOLE_BUILT === "1" && builtConsole()) || (await buildConsole());
log(`first page JavaScript: ${(firstPageJsGzip / 1024).toFixed(1)} KiB gzip`);
const loadBefore = os.loadavg()[0] ?? 0;
const store = await createTestStore("sqlite");
const idp = await startIdpService(store, {
  seed: async (handle) => {
    await loadDemo(handle.db);
    await seedUsers(handle.db);
  },
});
const browser = await launchBrowser();
const rows: {
  page: string;
  mode: string;
  median: number;
  p95: number;
  max: number;
  /** Medians of where the time went: the page's HTML received, the session answer received. */
  html: number;
  session: number;
}[] = [];

/** From navigation start: when the HTML and the /console/session answer had arrived. */
const milestones = (tab: import("playwright-core").Page) =>
  tab.evaluate(() => {
    const entries = performance.getEntries() as unknown as {
      entryType: string;
      name: string;
      responseEnd?: number;
    }[];
    const html = entries.find((e) => e.entryType === "navigation")?.responseEnd ?? 0;
    const session = entries.find((e) => e.name.endsWith("/console/session"))?.responseEnd ?? 0;
    return { html, session };
  });
try {
  const signedIn = await browser.newContext();
  await signInToConsole(await signedIn.newPage(), idp.base, {
    username: "alice",
    password: USERS.alice.password,
  });
  const state = await signedIn.storageState();
  await signedIn.close();
  for (const page of PAGES) {
    const url = `${idp.base}${page.path}`;
    const cold: number[] = [];
    const warm: number[] = [];
    const coldSteps: { html: number; session: number }[] = [];
    const warmSteps: { html: number; session: number }[] = [];
    for (let i = 0; i < LOADS; i++) {
      const context = await browser.newContext({ storageState: state });
      const tab = await context.newPage();
      cold.push(await firstPageInteractiveMs(tab, url));
      coldSteps.push(await milestones(tab));
      warm.push(await firstPageInteractiveMs(tab, url));
      warmSteps.push(await milestones(tab));
      await context.close();
    }
    const median = (values: number[]) =>
      round(
        percentile(
          [...values].sort((a, b) => a - b),
          50,
        ),
        0,
      );
    for (const [mode, samples, steps] of [
      ["cold (first visit)", cold, coldSteps],
      ["warm (cached assets)", warm, warmSteps],
    ] as const) {
      const sorted = [...samples].sort((a, b) => a - b);
      const row = {
        page: page.name,
        mode,
        median: round(percentile(sorted, 50), 0),
        p95: round(percentile(sorted, 95), 0),
        max: round(sorted[sorted.length - 1] as number, 0),
        html: median(steps.map((s) => s.html)),
        session: median(steps.map((s) => s.session)),
      };
      rows.push(row);
      log(
        `${row.page} ${row.mode}: median ${row.median} ms, p95 ${row.p95} ms, max ${row.max} ms (HTML at ${row.html} ms, session at ${row.session} ms)`,
      );
    }
  }
} finally {
  await browser.close();
  await idp.stop();
  await store.drop();
}

const cpus = os.cpus();
const machine = `${cpus.length} × ${cpus[0]?.model ?? "unknown CPU"}, ${round(os.totalmem() / 2 ** 30, 1)} GiB, Node.js ${process.version}, Debian Chromium; load average ${round(loadBefore, 2)} at start (the machine is shared)`;
const results = [
  `Run of ${new Date().toISOString().slice(0, 10)}: ${machine}. ${LOADS} loads per page and mode.`,
  "",
  `First page JavaScript: **${(firstPageJsGzip / 1024).toFixed(1)} KiB** gzip (target ≤ 200 KiB).`,
  "",
  "| page | mode | interactive median (ms) | p95 (ms) | max (ms) | HTML received, median (ms) | session answer received, median (ms) |",
  "|---|---|---:|---:|---:|---:|---:|",
  ...rows.map(
    (r) => `| ${r.page} | ${r.mode} | ${r.median} | ${r.p95} | ${r.max} | ${r.html} | ${r.session} |`,
  ),
].join("\n");
if (process.env.BENCH_CONSOLE_REPORT) {
  writeFileSync(process.env.BENCH_CONSOLE_REPORT, JSON.stringify({ firstPageJsGzip, rows }, null, 2));
}
if (LOADS === 20 || process.env.BENCH_WRITE_DOCS === "1") {
  writeResultsSection(
    join(ROOT, "docs", "benchmarks.md"),
    "console",
    "Web console: first page interactive and JavaScript size",
    results,
  );
  log("docs/benchmarks.md updated");
}
