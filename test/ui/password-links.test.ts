/**
 * Invite and password-reset links in Debian's chromium against the real
 * server: an admin invites a user through the API, the link opens a
 * stand-alone page that checks the password client-side, sets it and lands
 * the user signed in; the used link then says so plainly. The server runs
 * on a port chosen up front so its externalUrl (which the links are built
 * from) is its own origin.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../harness.ts";
import { freePort } from "../process/spawn.ts";
import { openBrowser, type BrowserSession } from "./browser.ts";

let server: TestServer;
let browser: BrowserSession;
const SLOW = 30_000;
const DEAD_LINK = "This link has been used or has expired; ask an admin for a new one.";

beforeAll(async () => {
  const port = freePort();
  server = await startTestServer({ SVC_LISTEN: `127.0.0.1:${port}`, SVC_EXTERNALURL: `http://127.0.0.1:${port}` });
  browser = await openBrowser({ width: 1280, height: 800 });
}, SLOW);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

async function setPassword(password: string, confirmation = password) {
  const { page } = browser;
  await page.getByLabel("New password", { exact: true }).fill(password);
  await page.getByLabel("Confirm new password").fill(confirmation);
  await page.getByRole("button", { name: /^Set .*password and sign in$/ }).click();
}

test(
  "an invite link sets the password client-side checked, signs the user in, and is then used up",
  async () => {
    const { page } = browser;
    const { user, inviteUrl } = await server.call<{ user: { id: string }; inviteUrl: string }>("/users", "POST", {
      username: "inka",
      email: "inka@example.com",
      role: "editor",
    });
    expect(inviteUrl).toStartWith(`${server.base}/ui/invite?token=`);

    await page.goto(inviteUrl);
    await page.getByRole("heading", { name: "Welcome to svc" }).waitFor();
    const password = page.getByLabel("New password", { exact: true });
    expect(await password.getAttribute("autocomplete")).toBe("new-password");
    expect(await password.getAttribute("type")).toBe("password");

    // Client-side checks: no request is made for either.
    let redeemCalls = 0;
    page.on("request", (req) => {
      if (req.url().endsWith("/api/v1/session/invite")) redeemCalls++;
    });
    await setPassword("too-short");
    await page.getByRole("alert").getByText("at least 12 characters").waitFor();
    await setPassword("a-long-enough-password", "a-different-password");
    await page.getByRole("alert").getByText("not the same").waitFor();
    expect(redeemCalls).toBe(0);
    await browser.screenshot("invite-error-1280");

    await setPassword("a-long-enough-password");
    await page.waitForURL(/\/ui\/dashboard$/);
    await page.getByText("inka", { exact: true }).waitFor();
    expect(redeemCalls).toBe(1);

    // The same link again (still signed in, as a forwarded link would be): it is used up.
    await page.goto(inviteUrl);
    await setPassword("another-long-password");
    await page.getByRole("alert").getByText(DEAD_LINK).waitFor();
    expect(page.url()).toContain("/ui/invite");
    await browser.screenshot("invite-used-1280");

    // The password set through the page is the user's password.
    const login = await server.api("/session", { method: "POST", token: null, json: { username: "inka", password: "a-long-enough-password" } });
    expect(login.status).toBe(200);

    // A reset link from the admin, opened signed out, at phone width.
    await page.context().clearCookies();
    await page.setViewportSize({ width: 390, height: 844 });
    const { resetUrl } = await server.call<{ resetUrl: string }>(`/users/${user.id}/password-reset`, "POST");
    await page.goto(resetUrl);
    await page.getByRole("heading", { name: "Reset your password" }).waitFor();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBe(0);
    await browser.screenshot("reset-password-390");
    await setPassword("a-brand-new-password");
    await page.waitForURL(/\/ui\/dashboard$/);
    await page.setViewportSize({ width: 1280, height: 800 });
    const old = await server.api("/session", { method: "POST", token: null, json: { username: "inka", password: "a-long-enough-password" } });
    expect(old.status).toBe(401);
  },
  SLOW,
);

test(
  "a link without a token says it cannot be used",
  async () => {
    const { page } = browser;
    await page.goto(`${server.base}/ui/reset-password`);
    await page.getByRole("alert").getByText(DEAD_LINK).waitFor();
    await page.getByRole("link", { name: "Go to sign in" }).waitFor();
  },
  SLOW,
);

test("no console or page errors during the run", () => {
  browser.assertClean();
});
