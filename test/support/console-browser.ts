import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { buildConsole } from "../../scripts/build-console.ts";
import { CONSOLE_BUILD_DIR } from "../../src/gateway/console/assets.ts";
import { CHROMIUM_FLAGS } from "./mcp-sign-in.ts";

/**
 * The web console's browser test kit: headless Chromium (Debian's) through playwright-core, a watcher
 * failing the test on console errors, uncaught page errors and any request to a host other than loopback,
 * an axe-core audit (serious and critical violations fail), screenshots under test-artifacts/console/,
 * and the sign-in through the identity provider's own pages (embedded or Keycloak).
 */

export const CONSOLE_ARTIFACTS = join(process.cwd(), "test-artifacts", "console");

let built: Promise<void> | undefined;
/** Builds the console bundle once per test process when the global setup did not (single-file runs). */
export function ensureConsoleBuilt(): Promise<void> {
  built ??= (async () => {
    if (process.env.IMAGING_CONSOLE_BUILT === "1" && existsSync(join(CONSOLE_BUILD_DIR, "index.html")))
      return;
    await buildConsole();
  })();
  return built;
}

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_FLAGS });
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]", "::1"]);

/** A browser context watched for what a user never wants: errors in the console, off-machine requests. */
export interface WatchedContext {
  context: BrowserContext;
  page: Page;
  consoleErrors: string[];
  foreignRequests: string[];
  /** Fails the test when anything was seen. */
  assertClean(): void;
  close(): Promise<void>;
}

export async function watchedContext(
  browser: Browser,
  options: { viewport?: { width: number; height: number } } = {},
): Promise<WatchedContext> {
  const context = await browser.newContext({ viewport: options.viewport ?? { width: 1280, height: 900 } });
  const consoleErrors: string[] = [];
  const foreignRequests: string[] = [];
  await context.route("**/*", (route) => {
    const url = new URL(route.request().url());
    if (url.protocol === "data:" || LOOPBACK.has(url.hostname)) return route.continue();
    foreignRequests.push(url.href);
    return route.abort("blockedbyclient");
  });
  const page = await context.newPage();
  page.on("console", (message) => {
    if (message.type() !== "error") return;
    const where = message.location().url;
    // Chromium logs every 4xx answer as an error; the API's refusals (403 to a viewer, 401 after sign-out)
    // are answers the pages handle. A missing asset or page, or any 5xx, still counts.
    const handledRefusal =
      /status of 4\d\d/.test(message.text()) && /\/console\/(api\/|session|sign-out)/.test(where);
    if (!handledRefusal) consoleErrors.push(`${message.text()} (${where})`);
  });
  page.on("pageerror", (error) => consoleErrors.push(`uncaught: ${error.message}`));
  return {
    context,
    page,
    consoleErrors,
    foreignRequests,
    assertClean() {
      assert.deepEqual(foreignRequests, [], "no request leaves the machine");
      assert.deepEqual(consoleErrors, [], "no error in the browser console");
    },
    close: () => context.close(),
  };
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/**
 * Runs axe-core on the page (WCAG 2.x A/AA rules and best practices) and fails on serious or critical
 * violations. The script is evaluated through the DevTools protocol, which the page's CSP does not govern.
 */
export async function auditAccessibility(page: Page, what: string): Promise<AxeViolation[]> {
  await page.evaluate(axeSource);
  const violations = (await page.evaluate(async () => {
    // axe is the global the script just defined; the page's document is what it audits
    const { axe, document } = globalThis as unknown as {
      axe: { run(context: unknown, options: unknown): Promise<{ violations: AxeViolation[] }> };
      document: unknown;
    };
    const result = await axe.run(document, {
      runOnly: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"],
    });
    return result.violations.map((v: AxeViolation) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => ({ target: n.target })),
    }));
  })) as AxeViolation[];
  const blocking = violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  assert.deepEqual(
    blocking.map(
      (v) => `${v.impact} ${v.id}: ${v.help} at ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`,
    ),
    [],
    `no serious or critical accessibility violation on ${what}`,
  );
  return violations;
}

/** Saves test-artifacts/console/<name>.png (full page). */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(CONSOLE_ARTIFACTS, { recursive: true });
  const path = join(CONSOLE_ARTIFACTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/** Waits until the console page shows its heading: the page is rendered and usable. */
export async function waitForHeading(page: Page, title: string | RegExp): Promise<void> {
  await page.locator("h1#page-heading", { hasText: title }).waitFor({ timeout: 15_000 });
}

/**
 * Opens `path` on the console, signs in on the identity provider's page (embedded: username/password
 * form; Keycloak: its login theme uses the same field names) and waits until the console shows the page.
 */
export async function signInToConsole(
  page: Page,
  base: string,
  user: { username: string; password: string },
  path = "/",
): Promise<void> {
  await page.goto(`${base}${path}`);
  await page.locator('input[name="username"]').fill(user.username);
  await page.locator('input[name="password"]').fill(user.password);
  await page.locator('input[name="password"]').press("Enter");
  await page.waitForURL((url) => url.origin === new URL(base).origin && !url.pathname.startsWith("/auth"), {
    timeout: 20_000,
  });
  await page.locator("h1#page-heading").waitFor({ timeout: 15_000 });
}

/**
 * First page interactive, as the browser measures it: from the navigation's start to the moment the
 * page's heading is rendered (the console answers input from then on). Needs a signed-in context.
 */
export async function firstPageInteractiveMs(page: Page, url: string): Promise<number> {
  await page.goto(url, { waitUntil: "commit" });
  const handle = await page.waitForFunction(
    // biome-ignore lint/suspicious/noExplicitAny: runs in the page (DOM types are not in this program)
    () => ((globalThis as any).document.querySelector("h1#page-heading") ? performance.now() : false),
    undefined,
    { timeout: 15_000, polling: "raf" },
  );
  return (await handle.jsonValue()) as number;
}
