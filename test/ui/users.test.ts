/**
 * The Users and Service accounts pages in Debian's chromium against the real
 * server (no SMTP, so links are shown to the admin): an admin invites a user
 * and sees the link; the link, opened in a second fresh browser, sets the
 * password and the user signs in; as a viewer they get the admins-only notice
 * and no write controls; the admin changes their role, makes a reset link,
 * disables, enables and deletes them; a service account is made with two
 * ticked scopes, its token shown once (gone after a reload) and working
 * until revoked. Screenshots at 1280 and 390 px; no console errors.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../harness.ts";
import { freePort } from "../process/spawn.ts";
import { openBrowser, type BrowserSession, signIn } from "./browser.ts";
import { SCOPES } from "../../shared/access.ts";

let server: TestServer;
let admin: BrowserSession;
let other: BrowserSession;
const SLOW = 40_000;
const PASSWORD = "nora-chose-this-password";

beforeAll(async () => {
  const port = freePort();
  server = await startTestServer({ SVC_LISTEN: `127.0.0.1:${port}`, SVC_EXTERNALURL: `http://127.0.0.1:${port}` });
  [admin, other] = await Promise.all([openBrowser({ width: 1280, height: 800 }), openBrowser({ width: 1280, height: 800 })]);
  const { username, password } = await server.uiAdmin();
  await signIn(admin.page, server.base, { username, password }, "/ui/users");
}, SLOW);

afterAll(async () => {
  await admin?.close();
  await other?.close();
  await server?.stop();
}, SLOW);

/** The row whose username is exactly `name` (role options make "admin" appear in every row). */
const userRow = (name: string) =>
  admin.page
    .getByRole("region", { name: "Users" })
    .locator("tbody tr")
    .filter({ has: admin.page.getByRole("rowheader").locator(".name").getByText(name, { exact: true }) });

async function noHorizontalScroll(browser: BrowserSession) {
  const overflow = await browser.page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  expect(overflow).toBe(0);
}

test(
  "an admin invites a user and sees the link; the user sets a password through it and signs in",
  async () => {
    const { page } = admin;
    await page.getByRole("heading", { name: "Users", level: 1 }).waitFor();
    await userRow("admin").waitFor();
    expect(await page.getByRole("columnheader").allTextContents()).toEqual(["Username", "E-mail", "Role", "State", "Created", "Actions"]);

    // A bad e-mail is the API's 400, shown beside the input.
    await page.getByLabel("Username").fill("Nora");
    await page.getByLabel("E-mail").fill("not-an-address");
    await page.getByRole("button", { name: "Invite" }).click();
    await page.locator("#invite-email-error").getByText("must be an e-mail address").waitFor();
    expect(await page.getByLabel("E-mail").getAttribute("aria-invalid")).toBe("true");

    await page.getByLabel("E-mail").fill("nora@example.com");
    await page.getByLabel("Role", { exact: true }).selectOption("viewer");
    await page.getByRole("button", { name: "Invite" }).click();
    const link = page.getByLabel("Invite link for nora");
    await link.waitFor();
    const url = await link.inputValue();
    expect(url).toStartWith(`${server.base}/ui/invite?token=svcul_`);
    await page.getByText("no mail was sent").waitFor();
    const row = userRow("nora");
    expect(await row.locator("td").nth(0).textContent()).toBe("nora@example.com");
    expect(await row.getByLabel("Role of nora").inputValue()).toBe("viewer");
    expect(await row.locator("td").nth(2).textContent()).toContain("enabled");
    await admin.screenshot("users-1280");

    // A fresh browser opens the link and sets the password.
    const guest = other.page;
    await guest.goto(url);
    await guest.getByLabel("New password", { exact: true }).fill(PASSWORD);
    await guest.getByLabel("Confirm new password").fill(PASSWORD);
    await guest.getByRole("button", { name: "Set password and sign in" }).click();
    await guest.waitForURL(/\/ui\/dashboard$/);

    // Signed out, the new password signs in.
    await other.context.clearCookies();
    await signIn(other.page, server.base, { username: "nora", password: PASSWORD }, "/ui/users");
  },
  SLOW,
);

test(
  "a viewer sees the admins-only notice and no write controls",
  async () => {
    const { page } = other;
    await page.getByText("Only admins can see and manage users. Your role is viewer").waitFor();
    expect(await page.getByRole("button", { name: "Invite" }).count()).toBe(0);
    expect(await page.getByRole("table").count()).toBe(0);
    expect(await page.getByRole("alert").filter({ hasText: "users:admin" }).count()).toBe(0);
    await page.goto(`${server.base}/ui/service-accounts`);
    await page.getByText("Only admins can see and manage service accounts.").waitFor();
    expect(await page.getByRole("button", { name: /Create|Revoke/ }).count()).toBe(0);
    expect(await page.getByRole("checkbox").count()).toBe(0);
  },
  SLOW,
);

test(
  "the admin changes the role, makes a reset link, disables, enables and deletes the user",
  async () => {
    const { page } = admin;
    const row = userRow("nora");
    await row.getByLabel("Role of nora").selectOption("editor");
    await row.getByRole("button", { name: "Save role for nora" }).click();
    await page.getByText("nora is now editor.").waitFor();
    const users = await server.call<{ items: { username: string; role: string }[] }>("/users");
    expect(users.items.find((u) => u.username === "nora")!.role).toBe("editor");
    expect(await row.getByRole("button", { name: "Save role for nora" }).count()).toBe(0);

    await row.getByRole("button", { name: "Send password reset to nora" }).click();
    const reset = page.getByLabel("Password reset link for nora");
    await reset.waitFor();
    expect(await reset.inputValue()).toStartWith(`${server.base}/ui/reset-password?token=svcul_`);
    expect(await page.getByLabel("Invite link for nora").count()).toBe(0);

    await row.getByRole("button", { name: "Disable nora" }).click();
    await page.getByText("nora is disabled and signed out.").waitFor();
    expect(await row.locator("td").nth(2).textContent()).toContain("disabled");
    await row.getByRole("button", { name: "Enable nora" }).click();
    await page.getByText("nora is enabled.").waitFor();

    // The admin's own row has no disable or delete.
    expect(
      await userRow("admin")
        .getByRole("button", { name: /Disable|Delete/ })
        .count(),
    ).toBe(0);

    await page.setViewportSize({ width: 390, height: 844 });
    await noHorizontalScroll(admin);
    await admin.screenshot("users-390");
    await page.setViewportSize({ width: 1280, height: 800 });

    page.once("dialog", (dialog) => void dialog.accept());
    await row.getByRole("button", { name: "Delete nora" }).click();
    await page.getByText("nora was deleted.").waitFor();
    expect(await userRow("nora").count()).toBe(0);
  },
  SLOW,
);

test(
  "a service account gets two ticked scopes; its token is shown once, works, and stops when revoked",
  async () => {
    const { page } = admin;
    await page.getByRole("link", { name: "Service accounts" }).click();
    await page.getByRole("heading", { name: "Service accounts", level: 1 }).waitFor();
    const rows = () => page.getByRole("region", { name: "Service accounts" }).locator("tbody tr");
    await rows().filter({ hasText: "admin" }).waitFor();
    expect(await page.getByRole("checkbox").count()).toBe(SCOPES.length);

    // No scope ticked: said beside the scopes, nothing is sent.
    await page.getByLabel("Name").fill("ci-deployer");
    await page.getByRole("button", { name: "Create service account" }).click();
    await page.locator("#account-scopes-error").getByText("tick at least one scope").waitFor();

    // A role preset ticks that role's scopes; untick them all again.
    await page.getByRole("button", { name: "Tick the viewer role's scopes" }).click();
    expect(await page.getByRole("checkbox", { checked: true }).count()).toBe(6);
    await page.getByRole("button", { name: "Untick every scope" }).click();
    expect(await page.getByRole("checkbox", { checked: true }).count()).toBe(0);

    await page.getByLabel("collectors:read").check();
    await page.getByLabel("config:publish").check();
    await page.getByRole("button", { name: "Create service account" }).click();
    const tokenBox = page.getByLabel("Token for ci-deployer");
    await tokenBox.waitFor();
    const token = await tokenBox.inputValue();
    expect(token).toMatch(/^svcsa_/);
    await page.getByText("it is shown only this once").waitFor();
    const created = rows().filter({ hasText: "ci-deployer" });
    expect(await created.getByRole("listitem").allTextContents()).toEqual(["collectors:read", "config:publish"]);
    expect(await page.getByLabel("collectors:read").isChecked()).toBe(false);
    expect((await server.api("/collectors", { token })).status).toBe(200);
    await admin.screenshot("service-accounts-1280");

    // After a reload the account is listed and its token is nowhere.
    await page.reload();
    await created.waitFor();
    expect(await page.getByLabel("Token for ci-deployer").count()).toBe(0);
    expect(await page.content()).not.toContain(token);

    await page.setViewportSize({ width: 390, height: 844 });
    await noHorizontalScroll(admin);
    await admin.screenshot("service-accounts-390");
    await page.setViewportSize({ width: 1280, height: 800 });

    page.once("dialog", (dialog) => void dialog.accept());
    await created.getByRole("button", { name: "Revoke ci-deployer" }).click();
    await page.getByText("ci-deployer was revoked.").waitFor();
    expect(await created.count()).toBe(0);
    expect((await server.api("/collectors", { token })).status).toBe(401);
  },
  SLOW,
);

test("no console or page errors in either browser", () => {
  admin.assertClean();
  other.assertClean();
});
