/**
 * What a visitor notices before signing in and on every tab, in Debian's
 * chromium against the real server: opening the login page again and again
 * logs no error (not even a 4xx, which Chromium reports as a console error)
 * and leaves no auth-failure burst in the audit log; the shell links an SVG
 * favicon, /favicon.ico answers the same icon; each route names its page in
 * document.title.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { startTestServer, type TestServer } from "../harness.ts";
import { openBrowser, SCREENSHOTS, type BrowserSession } from "./browser.ts";

let server: TestServer;
let browser: BrowserSession;
/** Chromium's start and argon2's deliberate slowness need more than bun's 5 s default. */
const SLOW = 30_000;

beforeAll(async () => {
  server = await startTestServer();
  browser = await openBrowser({ width: 1440, height: 900, colorScheme: "light" });
}, SLOW);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

test("opening the login page ten times signed out: no console error, no 4xx, title 'Sign in · svc'", async () => {
  const { page } = browser;
  const statuses: string[] = [];
  page.on("response", (res) => {
    if (res.status() >= 400) statuses.push(`${res.status()} ${res.url()}`);
  });
  for (let i = 0; i < 10; i++) {
    await page.goto(`${server.base}/ui/login`);
    await page.getByRole("heading", { name: "Sign in to svc" }).waitFor();
    await page.waitForLoadState("networkidle");
    expect(await page.title()).toBe("Sign in · svc");
  }
  // A page behind the login sends a signed-out visitor there, without a 401 either.
  await page.goto(`${server.base}/ui/collectors`);
  await page.waitForURL(/\/ui\/login\?next=%2Fui%2Fcollectors/);
  await page.waitForLoadState("networkidle");
  await browser.screenshot("first-visit-login-1440");
  expect(statuses).toEqual([]);
  expect(browser.httpErrors).toEqual([]);
  browser.assertClean();
}, 60_000);

test("a stale session cookie is cleared with a 200, and real API calls still answer 401", async () => {
  const stale = { headers: { Cookie: "svc_session=not-a-live-session" } };
  const res = await fetch(`${server.base}/api/v1/session/status`, stale);
  expect(res.status).toBe(200);
  expect(await res.json()).toEqual({ signedIn: false });
  expect(res.headers.get("set-cookie")).toContain("Max-Age=0");
  expect((await fetch(`${server.base}/api/v1/session`, stale)).status).toBe(401);
  expect((await fetch(`${server.base}/api/v1/session`)).status).toBe(401);
});

test(
  "the shell links an SVG favicon, and /favicon.ico answers the same icon",
  async () => {
    const { page } = browser;
    await page.goto(`${server.base}/ui/login`);
    const href = await page.locator('link[rel="icon"]').getAttribute("href");
    expect(href).toBe("/ui/favicon.svg");
    const icon = await page.request.get(`${server.base}${href}`);
    expect(icon.status()).toBe(200);
    expect(icon.headers()["content-type"]).toBe("image/svg+xml");
    const svg = await icon.text();
    expect(svg).toStartWith("<svg");
    const ico = await page.request.get(`${server.base}/favicon.ico`);
    expect(ico.status()).toBe(200);
    expect(ico.headers()["content-type"]).toBe("image/svg+xml");
    expect(await ico.text()).toBe(svg);
    // The browser draws it: an <img> of the icon loads under the page's CSP.
    const width = await page.evaluate(async (src) => {
      const img = new Image();
      img.src = src;
      await img.decode();
      return img.naturalWidth;
    }, href!);
    expect(width).toBeGreaterThan(0);
    // For review: the icon drawn at 128 px, as an <img> in the page.
    await page.evaluate((src) => {
      const img = document.createElement("img");
      Object.assign(img, { src, id: "favicon-preview", width: 128, height: 128 });
      document.body.append(img);
      return img.decode();
    }, href!);
    await page.locator("#favicon-preview").screenshot({ path: join(SCREENSHOTS, "favicon-128.png") });
  },
  SLOW,
);

test("signed in, each route names its page in the title", async () => {
  const { page } = browser;
  const admin = await server.uiAdmin();
  await page.goto(`${server.base}/ui/login`);
  await page.getByLabel("Username").fill(admin.username);
  await page.getByLabel("Password").fill(admin.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("navigation", { name: "Main" }).waitFor();
  // With the session cookie the status is the session itself, as GET /session answers it.
  const status = (await (await page.request.get(`${server.base}/api/v1/session/status`)).json()) as Record<string, any>;
  const session = (await (await page.request.get(`${server.base}/api/v1/session`)).json()) as Record<string, any>;
  expect(status).toEqual({ signedIn: true, user: session.user, csrfToken: session.csrfToken });
  expect(status.user.username).toBe("admin");
  const expected: [string, string][] = [
    ["Collectors", "Collectors · svc"],
    ["Pipelines", "Pipelines · svc"],
    ["Audit", "Audit · svc"],
    ["System", "System · svc"],
  ];
  // Through the navigation (no page load): the title follows the route.
  for (const [link, title] of expected) {
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: link }).click();
    await page.waitForFunction((want) => document.title === want, title);
  }
  await page.goto(`${server.base}/ui/collectors/some-id`);
  await page.waitForFunction(() => document.title === "Collectors · svc");
  await page.goto(`${server.base}/ui/no-such-page`);
  await page.waitForFunction(() => document.title === "Not found · svc");
  await browser.screenshot("first-visit-not-found-1440");
  browser.assertClean();
}, 60_000);

test("the visits above left no auth-failure burst in the audit log", async () => {
  // Stopping the HTTP server audits every window counted so far, full or not.
  await server.http.stop();
  const bursts = (await server.app.store.queryAudit({ limit: 1000 })).filter((e) => e.action === "auth.failure_burst");
  expect(bursts).toEqual([]);
});
