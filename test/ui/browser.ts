/**
 * Browser tests' harness: Debian's chromium (never a downloaded browser)
 * driven by playwright-core with the project's fixed flags and a fresh
 * profile, so runs share no cookies or storage. Every console error and
 * uncaught page error is recorded; `assertClean` fails the test on any.
 * Screenshots go to test-results/screenshots/ (git-ignored) for review.
 */
import { expect } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";
export const SCREENSHOTS = resolve(import.meta.dir, "../../test-results/screenshots");

const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];

/**
 * Chromium logs every 4xx/5xx fetch as a console error. A 4xx from the API is
 * an answer the UI is built to show (a wrong password, no session yet), so
 * those are kept apart in `httpErrors`; a 5xx still counts as an error.
 */
const CLIENT_ERROR_LOG = /^Failed to load resource: the server responded with a status of 4\d\d\b/;

export interface BrowserSession {
  page: Page;
  context: BrowserContext;
  /** Console errors and uncaught exceptions, in order. */
  errors: string[];
  /** 4xx answers the browser logged (see CLIENT_ERROR_LOG). */
  httpErrors: string[];
  screenshot(name: string): Promise<string>;
  /** Throws when any console or page error was seen. */
  assertClean(): void;
  close(): Promise<void>;
}

export async function openBrowser(options: { width?: number; height?: number; colorScheme?: "light" | "dark" } = {}): Promise<BrowserSession> {
  const profile = mkdtempSync(join(tmpdir(), "svc-chromium-"));
  // A persistent context is how playwright passes --user-data-dir; the dir is new each run.
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    ignoreDefaultArgs: true,
    args: [...FLAGS, `--user-data-dir=${profile}`, "--remote-debugging-pipe", "about:blank"],
    viewport: { width: options.width ?? 1280, height: options.height ?? 800 },
    colorScheme: options.colorScheme ?? "light",
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const errors: string[] = [];
  const httpErrors: string[] = [];
  page.on("console", (message) => {
    if (message.type() !== "error") return;
    const text = message.text();
    if (CLIENT_ERROR_LOG.test(text)) httpErrors.push(`${message.location().url}: ${text}`);
    else errors.push(`console: ${text}`);
  });
  page.on("pageerror", (error) => errors.push(`page: ${error.message}`));
  mkdirSync(SCREENSHOTS, { recursive: true });
  return {
    page,
    context,
    errors,
    httpErrors,
    async screenshot(name) {
      const path = join(SCREENSHOTS, `${name}.png`);
      await page.screenshot({ path, fullPage: true });
      return path;
    },
    assertClean() {
      if (errors.length > 0) throw new Error(`the browser reported errors:\n${errors.join("\n")}`);
    },
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Signs in through the login form, asking to land on `next`, and waits until the page is there. */
export async function signIn(page: Page, base: string, who: { username: string; password: string }, next: string): Promise<void> {
  await page.goto(`${base}/ui/login?next=${encodeURIComponent(next)}`);
  await page.getByLabel("Username").fill(who.username);
  await page.getByLabel("Password").fill(who.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL((url) => url.pathname === next);
}

/**
 * At a 390 px phone's viewport the page scrolls no wider than the screen; a
 * screenshot `name` is taken there, then the 1280 px desktop viewport is back.
 */
export async function phone(browser: BrowserSession, name: string): Promise<void> {
  const { page } = browser;
  await page.setViewportSize({ width: 390, height: 844 });
  expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBe(0);
  await browser.screenshot(name);
  await page.setViewportSize({ width: 1280, height: 800 });
}

/** Follows the main navigation's link `label` (a desktop viewport, where the links are not folded behind Menu). */
export async function goTo(page: Page, label: string): Promise<void> {
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: label, exact: true }).click();
}

/** The newcomer's first two records, made in the catalog forms: a "Log files" source reading /var/log/app/*.log and an OTLP/HTTP destination "backend". */
export async function createLogSourceAndBackend(page: Page, sourceName: string): Promise<void> {
  await goTo(page, "Sources");
  await page.getByRole("button", { name: "New source" }).click();
  await page.getByRole("button", { name: "Log files" }).click();
  await page.getByLabel(/^Name/).fill(sourceName);
  await page.getByLabel("Include 1", { exact: true }).fill("/var/log/app/*.log");
  await page.getByRole("button", { name: "Save", exact: true }).click();
  await page.getByText(`Created source "${sourceName}".`, { exact: false }).waitFor();

  await goTo(page, "Destinations");
  await page.getByRole("button", { name: "New destination" }).click();
  await page.getByRole("button", { name: "OTLP/HTTP" }).click();
  await page.getByLabel(/^Name/).fill("backend");
  await page.getByLabel("Endpoint").fill("https://otlp.example.com:4318");
  await page.getByRole("button", { name: "Save", exact: true }).click();
  await page.getByText('Created destination "backend".', { exact: false }).waitFor();
}

/** On the Pipelines page: creates a logs pipeline `name` with the form and answers its id once its editor is open. */
export async function createLogsPipeline(page: Page, name: string): Promise<string> {
  await page.getByLabel("Name").fill(name);
  await page.getByLabel("Signal").selectOption("logs");
  await page.getByRole("button", { name: "Create pipeline" }).click();
  await page.waitForURL(/\/ui\/pipelines\/[^/]+$/);
  return decodeURIComponent(new URL(page.url()).pathname.split("/").at(-1)!);
}
