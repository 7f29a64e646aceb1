/**
 * The UI shell against the real server in Debian's chromium: the login
 * form's labels and keyboard use, the API's error shown on a failed sign-in,
 * the signed-out redirect, signing in and out around the app shell and the
 * System page, the theme toggle, phone and desktop screenshots, and the
 * headers the bundle is served with (CSP, compression, caching).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../harness.ts";
import { openBrowser, type BrowserSession } from "./browser.ts";

let server: TestServer;
let browser: BrowserSession;
/** Chromium's start and argon2's deliberate slowness need more than bun's 5 s default. */
const SLOW = 30_000;

beforeAll(async () => {
  server = await startTestServer();
  browser = await openBrowser({ width: 1280, height: 800, colorScheme: "light" });
}, SLOW);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

/** What the API itself says to these credentials: the UI must show exactly this message. */
async function apiAnswerTo(username: string, password: string) {
  const res = await fetch(`${server.base}/api/v1/session`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ username, password }),
  });
  const body = (await res.json()) as { error: { code: string; message: string } };
  return { status: res.status, ...body.error };
}

test(
  "/ redirects to the UI, and a signed-out visitor lands on the login page",
  async () => {
    const { page } = browser;
    await page.goto(`${server.base}/`);
    await page.waitForURL(/\/ui\/login/);
    await expect(page.getByRole("heading", { name: "Sign in to svc" }).isVisible()).resolves.toBe(true);
  },
  SLOW,
);

test(
  "the login form is labelled, works from the keyboard and shows the API's error",
  async () => {
    const { page } = browser;
    const expected = await apiAnswerTo("nobody", "wrong-password");
    expect(expected.status).toBeGreaterThanOrEqual(400);

    await page.goto(`${server.base}/ui/login`);
    const username = page.getByLabel("Username");
    const password = page.getByLabel("Password");
    expect(await username.getAttribute("autocomplete")).toBe("username");
    expect(await password.getAttribute("type")).toBe("password");
    // Autofocus on the username, then Tab and Enter: no mouse needed.
    await page.waitForFunction(() => document.activeElement?.id === "username");
    await page.keyboard.type("nobody");
    await page.keyboard.press("Tab");
    await page.keyboard.type("wrong-password");
    await page.keyboard.press("Enter");

    const alert = page.getByRole("alert");
    await alert.getByText(expected.message).waitFor();
    expect(await alert.textContent()).toContain(expected.code);
    expect(page.url()).toContain("/ui/login");
    await browser.screenshot("login-error-1280");
  },
  SLOW,
);

test(
  "the theme toggle switches light and dark, and the choice survives a reload",
  async () => {
    const { page } = browser;
    await page.goto(`${server.base}/ui/login`);
    const background = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    const light = await background();
    await page.getByRole("button", { name: "Dark theme" }).click();
    const dark = await background();
    expect(dark).not.toBe(light);
    await browser.screenshot("login-dark-1280");
    await page.reload();
    await page.getByRole("button", { name: "Light theme" }).waitFor();
    expect(await background()).toBe(dark);
    await page.getByRole("button", { name: "Light theme" }).click();
    expect(await background()).toBe(light);
  },
  SLOW,
);

test(
  "the login page fits a 390 px phone screen",
  async () => {
    const { page } = browser;
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${server.base}/ui/login`);
    await page.getByLabel("Username").waitFor();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBe(0);
    await browser.screenshot("login-390");
    await page.setViewportSize({ width: 1280, height: 800 });
    await browser.screenshot("login-1280");
  },
  SLOW,
);

test("index.html and the bundle carry the CSP, compression and cache headers", async () => {
  const index = await fetch(`${server.base}/ui/system`, { headers: { "Accept-Encoding": "gzip" } });
  expect(index.status).toBe(200);
  expect(index.headers.get("content-type")).toStartWith("text/html");
  expect(index.headers.get("cache-control")).toBe("no-cache");
  const csp = index.headers.get("content-security-policy") ?? "";
  expect(csp).toContain("default-src 'self'");
  expect(csp).toContain("script-src 'self'");
  expect(csp).toContain("frame-ancestors 'none'");
  expect(csp).not.toContain("unsafe-inline");
  expect(index.headers.get("x-content-type-options")).toBe("nosniff");
  expect(index.headers.get("referrer-policy")).toBe("same-origin");
  const html = await index.text();
  expect(html).not.toMatch(/<script>|<style>| style=/);

  const script = /<script type="module" src="(\/ui\/assets\/main-[a-z0-9]+\.js)"/.exec(html)?.[1];
  expect(script).toBeDefined();
  const js = await fetch(`${server.base}${script}`, { headers: { "Accept-Encoding": "gzip" }, decompress: false });
  expect(js.status).toBe(200);
  expect(js.headers.get("content-encoding")).toBe("gzip");
  expect(js.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
  expect(js.headers.get("content-security-policy")).toBe(csp);
  const gz = new Uint8Array(await js.arrayBuffer());
  expect([gz[0], gz[1]]).toEqual([0x1f, 0x8b]);
  const plain = Bun.gunzipSync(gz);
  expect(gz.byteLength).toBeLessThan(plain.byteLength / 2);

  const missing = await fetch(`${server.base}/ui/assets/main-00000000.js`);
  expect(missing.status).toBe(404);
});

test(
  "signing in opens the shell on the page asked for; the System page shows the health; sign out",
  async () => {
    const { page } = browser;
    const admin = await server.uiAdmin();
    await page.goto(`${server.base}/ui/system`);
    await page.waitForURL(/\/ui\/login\?next=%2Fui%2Fsystem/);
    await page.getByLabel("Username").fill(admin.username);
    await page.getByLabel("Password").fill(admin.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(/\/ui\/system$/);

    const nav = page.getByRole("navigation", { name: "Main" });
    await nav.waitFor();
    for (const label of ["Collectors", "Pipelines", "Changes", "Hosts", "Onboarding", "Audit", "System"]) {
      await expect(nav.getByRole("link", { name: label }).isVisible()).resolves.toBe(true);
    }
    expect(await nav.getByRole("link", { name: "System" }).getAttribute("aria-current")).toBe("page");
    const health = page.getByRole("table", { name: "Control plane" });
    await health.waitFor();
    expect(await health.getByRole("row", { name: /^Status/ }).textContent()).toContain("ok");
    await browser.screenshot("system-1280");
    await page.setViewportSize({ width: 390, height: 844 });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBe(0);
    await browser.screenshot("system-390");
    await page.setViewportSize({ width: 1280, height: 800 });

    // Client-side navigation keeps the session; a reload finds it again through the cookie.
    await nav.getByRole("link", { name: "Collectors" }).click();
    await page.getByRole("heading", { name: "Collectors" }).waitFor();
    await page.reload();
    await page.getByRole("heading", { name: "Collectors" }).waitFor();

    // Sign-out is a cookie-authenticated DELETE: it only succeeds with the CSRF token the client keeps.
    const signOut = page.waitForResponse((res) => res.url().endsWith("/api/v1/session") && res.request().method() === "DELETE");
    await page.getByRole("button", { name: "Sign out" }).click();
    expect((await signOut).status()).toBe(204);
    await page.waitForURL(/\/ui\/login/);
    await page.goto(`${server.base}/ui/system`);
    await page.waitForURL(/\/ui\/login\?next=/);
  },
  SLOW,
);

test("no console or page errors during the run", () => {
  browser.assertClean();
});
