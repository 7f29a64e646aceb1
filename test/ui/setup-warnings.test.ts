/**
 * The System and Onboarding pages in Debian's chromium when onboarding cannot
 * work: without externalUrl and without svc-agent packages the System page
 * warns about both with the fix, and Onboarding offers no command or file
 * that would fail (disabled, the reason beside it), so nothing is minted.
 * With the quick-start's loopback URL the collector paths work again, the
 * System page says the URL serves this host only, and the agent stays
 * unavailable until packages are there. Screenshots, no console errors.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startTestServer, type TestServer } from "../harness.ts";
import { openBrowser, type BrowserSession, signIn } from "./browser.ts";

let server: TestServer;
let browser: BrowserSession;
let downloads: string;
const SLOW = 30_000;

beforeAll(async () => {
  server = await startTestServer();
  downloads = join(server.dir, "downloads");
  mkdirSync(downloads);
  server.app.config.downloads.dir = downloads;
  browser = await openBrowser({ width: 1280, height: 800 });
  await signIn(browser.page, server.base, await server.uiAdmin(), "/ui/system");
}, SLOW);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

const tokenCount = async () => (await server.call<{ items: unknown[] }>("/enrollment-tokens")).items.length;

test(
  "without externalUrl or packages the System page warns about both, each with its fix",
  async () => {
    const { page } = browser;
    const url = page.locator("#warning-external-url");
    await url.waitFor();
    expect(await url.innerText()).toMatch(/^Collectors cannot be onboarded\. .*set externalUrl in config\.yaml/);
    const packages = page.locator("#warning-downloads");
    expect(await packages.innerText()).toMatch(/^svc-agent cannot be installed\. .*has no SHA256SUMS.*npm run package/);
    await browser.screenshot("system-warnings-1280");
  },
  SLOW,
);

test(
  "Onboarding offers nothing that cannot work: every minting button is disabled with the reason, and nothing is minted",
  async () => {
    const { page } = browser;
    await page.goto(`${server.base}/ui/onboarding`);
    await page.getByText("No enrollment tokens.", { exact: true }).waitFor();
    await page.locator("#bootstrap-blocked").waitFor(); // once the readiness has arrived
    for (const [button, reason] of [
      ["Create agent command", "#agent-blocked"],
      ["Create collector command", "#collector-blocked"],
      ["Show bootstrap files", "#bootstrap-blocked"],
    ] as const) {
      const control = page.getByRole("button", { name: button });
      await expect(control.isDisabled()).resolves.toBe(true);
      expect(await control.getAttribute("aria-describedby")).toBe(reason.slice(1));
      expect(await page.locator(reason).innerText()).toContain("set externalUrl");
    }
    expect(await page.getByLabel("Also install svc-agent").isDisabled()).toBe(true);
    expect(await tokenCount()).toBe(0);
    await browser.screenshot("onboarding-blocked-1280");
  },
  SLOW,
);

test(
  "with the quick-start's loopback URL the collector paths work; the agent waits for packages",
  async () => {
    const { page } = browser;
    server.app.config.externalUrl = server.base;
    server.app.config.externalUrlFromListen = true;
    await page.goto(`${server.base}/ui/system`);
    const note = page.locator("#warning-external-url");
    await note.waitFor();
    expect(await note.innerText()).toContain(
      `externalUrl is not set. The quick-start gives collectors the URL it serves, ${server.base}, which works on this host only.`,
    );
    expect(await page.locator("#warning-downloads").count()).toBe(1);
    await browser.screenshot("system-quickstart-1280");

    await page.goto(`${server.base}/ui/onboarding`);
    const show = page.getByRole("button", { name: "Show bootstrap files" });
    await page.waitForFunction(() => !(document.querySelector("#collector-blocked") ?? null) && document.querySelector("#agent-blocked") !== null);
    expect(await page.getByRole("button", { name: "Create agent command" }).isDisabled()).toBe(true);
    expect(await page.locator("#agent-blocked").innerText()).toContain("no SHA256SUMS");
    expect(await page.getByRole("button", { name: "Create collector command" }).isDisabled()).toBe(false);
    await show.click();
    await page.getByText("2 files for OpenTelemetry Collector (OpAMP).", { exact: true }).waitFor();
    expect(await page.getByRole("region", { name: "/etc/opampsupervisor/config.yaml" }).locator("pre").innerText()).toContain(
      `${server.base.replace(/^http/, "ws")}/v1/opamp`,
    );
    expect(await tokenCount()).toBe(1);

    // Packages arrive: the agent command is offered again.
    const deb = "stand-in";
    writeFileSync(join(downloads, "svc-agent_1.0.0_amd64.deb"), deb);
    writeFileSync(join(downloads, "SHA256SUMS"), `${new Bun.CryptoHasher("sha256").update(deb).digest("hex")}  svc-agent_1.0.0_amd64.deb\n`);
    await page.reload();
    await page.getByText(/^Showing 1 token/).waitFor();
    await page.waitForFunction(() => document.querySelector("#agent-blocked") === null);
    expect(await page.getByRole("button", { name: "Create agent command" }).isDisabled()).toBe(false);
    expect(await page.getByLabel("Also install svc-agent").isDisabled()).toBe(false);
  },
  SLOW,
);

test(
  "the warning fits a 390 px phone, and the packages' warning is gone once they are there",
  async () => {
    const { page } = browser;
    server.app.config.externalUrl = "";
    server.app.config.externalUrlFromListen = false;
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${server.base}/ui/system`);
    await page.locator("#warning-external-url").waitFor();
    expect(await page.locator("#warning-downloads").count()).toBe(0);
    expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBe(0);
    await browser.screenshot("system-warnings-390");
  },
  SLOW,
);

test("no console or page errors during the run", () => {
  browser.assertClean();
});
