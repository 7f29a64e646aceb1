/**
 * The Onboarding and Audit pages in Debian's chromium against the real
 * server, whose externalUrl is its own origin (a port chosen up front) and
 * whose downloads.dir holds a stand-in svc-agent package with its SHA256SUMS:
 * an agent install command and a collector one with the agent, each copied
 * to the clipboard; the tokens they minted in the list; one revoked after a
 * confirm; then the Audit page listing the enrollment entries, its action
 * filter narrowing them in the URL; bootstrap files of both runtimes, from a
 * fresh token and from one the user holds, with their paths and Copy, and a
 * token for the other runtime refused beside its field; a viewer seeing
 * the tokens without any write button; desktop and phone
 * screenshots, and no console errors.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestServer, type TestServer } from "../harness.ts";
import { freePort } from "../process/spawn.ts";
import { openBrowser, type BrowserSession, signIn } from "./browser.ts";

let server: TestServer;
let browser: BrowserSession;
let downloads: string;
const SLOW = 30_000;

beforeAll(async () => {
  const port = freePort();
  // The agent commands are offered only when install.sh could fetch an svc-agent package.
  downloads = mkdtempSync(join(tmpdir(), "svc-downloads-"));
  writeFileSync(join(downloads, "svc-agent_1.0.0_amd64.deb"), "stand-in");
  writeFileSync(join(downloads, "SHA256SUMS"), `${new Bun.CryptoHasher("sha256").update("stand-in").digest("hex")}  svc-agent_1.0.0_amd64.deb\n`);
  server = await startTestServer({ SVC_LISTEN: `127.0.0.1:${port}`, SVC_EXTERNALURL: `http://127.0.0.1:${port}`, SVC_DOWNLOADS_DIR: downloads });
  browser = await openBrowser({ width: 1280, height: 800 });
  await browser.context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.base });
  const admin = await server.uiAdmin();
  const { page } = browser;
  await signIn(page, server.base, admin, "/ui/onboarding");
}, SLOW);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  if (downloads) rmSync(downloads, { recursive: true, force: true });
});

const tokenRows = () => browser.page.getByRole("region", { name: "Enrollment tokens" }).locator("tbody tr");
const auditRows = () => browser.page.getByRole("region", { name: "Audit entries" }).locator("tbody tr");

test(
  "an agent command is minted, shown read-only and copied",
  async () => {
    const { page } = browser;
    await page.getByText("No enrollment tokens.", { exact: true }).waitFor();
    await page.getByLabel("Hosts that may use it").fill("3");
    await page.getByLabel("Environment", { exact: true }).first().fill("prod");
    await page.getByRole("button", { name: "Create agent command" }).click();
    const box = page.getByLabel("Agent install command", { exact: true }).and(page.locator("textarea"));
    await box.waitFor();
    const snippet = await box.inputValue();
    expect(snippet).toContain(`${server.base}/downloads/install.sh`);
    expect(snippet).toContain("--agent-token svcen_");
    expect(await box.getAttribute("readonly")).not.toBeNull();
    await page.getByRole("button", { name: "Copy" }).click();
    await page.getByRole("status").getByText("Copied", { exact: true }).waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(snippet);
    await page.getByText("Showing 1 token, oldest first.", { exact: true }).waitFor();
    const cells = await tokenRows().first().locator("td").allTextContents();
    expect(cells.slice(0, 3)).toEqual(["agent", "prod", "0 / 3"]);
    expect(cells[4]).toContain("active");
  },
  SLOW,
);

test(
  "a collector command with the agent mints two tokens",
  async () => {
    const { page } = browser;
    expect(await page.getByLabel("Management").inputValue()).toBe("opamp");
    await page.locator("#collector-environment").fill("staging");
    await page.getByLabel("Also install svc-agent").check();
    await page.getByRole("button", { name: "Create collector command" }).click();
    const box = page.locator("textarea#collector-snippet");
    await box.waitFor();
    const snippet = await box.inputValue();
    expect(snippet).toContain("/downloads/install.sh");
    expect(snippet).toContain("--agent-token svcen_");
    await page.getByText("Showing 3 tokens, oldest first.", { exact: true }).waitFor();
    const kinds = await tokenRows().locator("td:nth-child(2)").allTextContents();
    expect(kinds.sort()).toEqual(["agent", "agent", "opamp"]);
    await browser.screenshot("onboarding-1280");
  },
  SLOW,
);

test(
  "revoking a token asks first and marks it revoked",
  async () => {
    const { page } = browser;
    const first = tokenRows().first();
    // Dismissing the confirm leaves the token alone.
    page.once("dialog", (dialog) => void dialog.dismiss());
    await first.getByRole("button", { name: /^Revoke / }).click();
    expect(await first.innerText()).toContain("active");
    page.once("dialog", (dialog) => void dialog.accept());
    await first.getByRole("button", { name: /^Revoke / }).click();
    await first.locator(".token-revoked").waitFor();
    expect(await first.locator("td").nth(4).innerText()).toContain("revoked");
    expect(await first.getByRole("button").count()).toBe(0);
    const { items } = await server.call<{ items: { revokedAt: string | null }[] }>("/enrollment-tokens");
    expect(items.filter((t) => t.revokedAt !== null).length).toBe(1);
  },
  SLOW,
);

test(
  "the Audit page lists the enrollment entries and filters by action in the URL",
  async () => {
    const { page } = browser;
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Audit" }).click();
    await page.waitForURL(/\/ui\/audit$/);
    await page.getByText(/^Showing \d+ entries\.$/).waitFor();
    const headers = await page.getByRole("columnheader").allTextContents();
    expect(headers).toEqual(["Time", "Actor", "Action", "Resource", "Outcome", "Details"]);
    const actions = await auditRows().locator("th").allTextContents();
    expect(actions.filter((a) => a === "enrollment.create").length).toBe(3);
    expect(actions).toContain("enrollment.revoke");
    const revoke = auditRows().filter({ hasText: "enrollment.revoke" });
    expect(await revoke.locator("td").nth(3).innerText()).toContain("success");
    await browser.screenshot("audit-1280");

    await page.getByLabel("Action").fill("enrollment.revoke");
    await page.getByRole("button", { name: "Filter" }).click();
    await page.getByText("Showing 1 entry.", { exact: true }).waitFor();
    expect(new URL(page.url()).searchParams.get("action")).toBe("enrollment.revoke");
    expect(await auditRows().locator("th").allTextContents()).toEqual(["enrollment.revoke"]);

    await page.reload();
    await page.getByText("Showing 1 entry.", { exact: true }).waitFor();
    expect(await page.getByLabel("Action").inputValue()).toBe("enrollment.revoke");

    await page.getByLabel("Action").fill("enrollment.create");
    await page.getByRole("button", { name: "Filter" }).click();
    await page.getByText("Showing 3 entries.", { exact: true }).waitFor();

    await page.getByLabel("Action").fill("no.such.action");
    await page.getByRole("button", { name: "Filter" }).click();
    await page.getByText("No audit entries match these filters.", { exact: true }).waitFor();
    await page.getByRole("button", { name: "Clear" }).click();
    await page.waitForURL(/\/ui\/audit$/);
    await page.getByText(/^Showing \d+ entries\.$/).waitFor();
  },
  SLOW,
);

test(
  "a bad time filter shows the API's error",
  async () => {
    const { page } = browser;
    await page.goto(`${server.base}/ui/audit?from=yesterday`);
    await page
      .getByRole("alert")
      .getByText(/HTTP 400/)
      .waitFor();
  },
  SLOW,
);

test(
  "bootstrap files of both runtimes show their target paths and copy",
  async () => {
    const { page } = browser;
    await page.goto(`${server.base}/ui/onboarding`);
    await page.getByText("Showing 3 tokens, oldest first.", { exact: true }).waitFor();
    const form = page.getByRole("form", { name: "Bootstrap files" });
    expect(await form.getByRole("radio", { name: /^OpenTelemetry Collector \(OpAMP\)/ }).isChecked()).toBe(true);
    expect(await form.getByRole("radio", { name: "Mint a single-use enrollment token" }).isChecked()).toBe(true);

    // Runtime O from a fresh single-use token: the collector and supervisor configs.
    await form.getByLabel("Environment").fill("edge");
    await form.getByRole("button", { name: "Show bootstrap files" }).click();
    await page.getByText("2 files for OpenTelemetry Collector (OpAMP).", { exact: true }).waitFor();
    const config = page.getByRole("region", { name: "/etc/otel-collector/config.yaml" });
    const body = await config.locator("pre").innerText();
    expect(body).toContain("Bearer svcen_");
    expect(body).toContain(`${server.base.replace(/^http/, "ws")}/v1/opamp`);
    expect(await page.getByRole("heading", { name: "/etc/opampsupervisor/config.yaml" }).count()).toBe(1);
    await config.getByRole("button", { name: "Copy /etc/otel-collector/config.yaml" }).click();
    await config.getByRole("status").getByText("Copied", { exact: true }).waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(body);
    await page.getByText("Showing 4 tokens, oldest first.", { exact: true }).waitFor();
    expect(await tokenRows().last().locator("td").allTextContents()).toEqual(expect.arrayContaining(["opamp", "edge", "0 / 1"]));
    await browser.screenshot("onboarding-bootstrap-1280");

    // A token the user holds goes in the body; it renders the same files for that token.
    const held = await server.call<{ token: string }>("/enrollment-tokens", "POST", { kind: "opamp" });
    await form.getByRole("radio", { name: "Use a token I have" }).check();
    await form.getByLabel("Enrollment token", { exact: true }).fill(held.token);
    await form.getByRole("button", { name: "Show bootstrap files" }).click();
    await page.getByText("2 files for OpenTelemetry Collector (OpAMP).", { exact: true }).waitFor();
    expect(await config.locator("pre").innerText()).toContain(`Bearer ${held.token}`);

    // The same token for Runtime R is refused, the reason next to the token field.
    await form.getByRole("radio", { name: /^Alloy \(remote config\)/ }).check();
    await form.getByLabel("Collector token", { exact: true }).fill(held.token);
    await form.getByRole("button", { name: "Show bootstrap files" }).click();
    await page
      .getByRole("alert")
      .getByText(/HTTP 400/)
      .waitFor();
    expect(await form.getByLabel("Collector token", { exact: true }).getAttribute("aria-invalid")).toBe("true");
    expect(await page.locator("#bootstrap-token-error").innerText()).toContain("otelcol runtime");

    // Runtime R for an rcfg collector, minting its own token.
    const rcfg = await server.call<{ id: string }>("/collectors", "POST", { name: "rcfg-host", managementMode: "rcfg-remotecfg" });
    await form.getByRole("radio", { name: "Mint the collector's token" }).check();
    await form.getByLabel("Collector", { exact: true }).fill(rcfg.id);
    await form.getByRole("button", { name: "Show bootstrap files" }).click();
    await page.getByText("1 file for Alloy (remote config).", { exact: true }).waitFor();
    const rcfgFile = await page.getByRole("region", { name: "/etc/rcfg-runtime/config.rcfg" }).locator("pre").innerText();
    expect(rcfgFile).toContain("svcct_");
    expect(rcfgFile).toContain(rcfg.id);
    expect(await page.getByRole("alert").count()).toBe(0);
  },
  SLOW,
);

test(
  "a viewer sees the tokens but nothing that mints or revokes",
  async () => {
    const invited = await server.call<{ inviteUrl: string }>("/users", "POST", { username: "vic", email: "vic@example.com", role: "viewer" });
    const token = new URL(invited.inviteUrl).searchParams.get("token")!;
    const viewer = await openBrowser({ width: 1280, height: 800 });
    try {
      // The request context shares the browser's cookies: redeeming the invite signs the viewer in.
      const res = await viewer.context.request.post(`${server.base}/api/v1/session/invite`, { data: { token, password: "viewer-password-123" } });
      expect(res.status()).toBe(200);
      await viewer.page.goto(`${server.base}/ui/onboarding`);
      await viewer.page.getByText(/^Showing \d+ tokens, oldest first\.$/).waitFor();
      expect(
        await viewer.page
          .getByRole("button")
          .filter({ hasText: /^(Create|Show|Revoke)/ })
          .count(),
      ).toBe(0);
      expect(await viewer.page.getByRole("form").count()).toBe(0);
      viewer.assertClean();
    } finally {
      await viewer.close();
    }
  },
  SLOW,
);

test(
  "both pages fit a 390 px phone",
  async () => {
    const { page } = browser;
    await page.setViewportSize({ width: 390, height: 844 });
    for (const [path, name] of [
      ["/ui/audit", "audit-390"],
      ["/ui/onboarding", "onboarding-390"],
    ] as const) {
      await page.goto(`${server.base}${path}`);
      await page.getByText(/^Showing \d+/).waitFor();
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      expect(overflow).toBe(0);
      await browser.screenshot(name);
    }
    await page.setViewportSize({ width: 1280, height: 800 });
  },
  SLOW,
);

test("no console or page errors during the run", () => {
  browser.assertClean();
});
