/**
 * The Hosts page in Debian's chromium against the real server and the real
 * agent run from source: the host list, a host's facts, and the log browser
 * (into a nested dir, up by the breadcrumb, a file sampled as lines/tail and
 * bytes/head); a second agent with browsing turned off shows exactly the
 * agent's refusal. Desktop and phone screenshots, and no console errors.
 */
import type { Subprocess } from "bun";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestServer, type TestServer } from "../harness.ts";
import { startAgent, stopAgents, untilConnected } from "./agents.ts";
import { openBrowser, phone, type BrowserSession, signIn } from "./browser.ts";

let server: TestServer;
let browser: BrowserSession;
let dir: string;
let tree: string;
const agents: Subprocess[] = [];
const SLOW = 60_000;
const LOG_LINES = Array.from({ length: 40 }, (_, i) => `event ${String(i + 1).padStart(2, "0")} ok`);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "svc-ui-hosts-"));
  // The agent reports real paths; resolve /tmp symlinks so the test compares like with like.
  mkdirSync(join(dir, "logs"));
  tree = realpathSync(join(dir, "logs"));
  mkdirSync(join(tree, "nested"));
  mkdirSync(join(tree, "other"));
  writeFileSync(join(tree, "nested", "app.log"), LOG_LINES.join("\n") + "\n");
  writeFileSync(join(tree, "nested", "blob.bin"), Buffer.from([0, 1, 2, 3, 0, 255, 0, 0, 7, 8]));
  writeFileSync(join(tree, "top.log"), "top\n");
  // More entries than the agent's maxDirEntries (5): that listing is cut and says so.
  mkdirSync(join(tree, "many"));
  for (let i = 0; i < 8; i++) writeFileSync(join(tree, "many", `f${i}.log`), "");

  server = await startTestServer();
  const { token } = await server.call<{ token: string }>("/enrollment-tokens", "POST", { kind: "agent", maxUses: 2 });
  agents.push(startAgent(server, dir, "ui-host-main", token, `  allowedRoots: [${tree}]\n  maxDirEntries: 5`));
  agents.push(startAgent(server, dir, "ui-host-off", token, "  enabled: false"));
  browser = await openBrowser({ width: 1280, height: 800 });
  await Promise.all([untilConnected(server, "ui-host-main"), untilConnected(server, "ui-host-off")]);

  const admin = await server.uiAdmin();
  const { page } = browser;
  await signIn(page, server.base, admin, "/ui/hosts");
}, SLOW);

afterAll(async () => {
  await stopAgents(agents);
  await browser?.close();
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const rows = () => browser.page.getByRole("region", { name: "Hosts" }).locator("tbody tr");

test(
  "the list shows both hosts with status as a word, OS, environment, last seen and connected",
  async () => {
    const { page } = browser;
    await page.getByText("Showing 2 hosts.", { exact: true }).waitFor();
    const headers = await page.getByRole("columnheader").allTextContents();
    expect(headers).toEqual(["Hostname", "Status", "OS", "Environment", "Last seen", "Connected"]);
    const main = rows().filter({ hasText: "ui-host-main" });
    const cells = await main.locator("td").allTextContents();
    expect(cells[0]).toContain("online");
    expect(cells[2]).toBe("uitest");
    expect(cells[3]).not.toBe("never");
    expect(cells[4]).toBe("yes");
    expect(cells[1]).not.toBe("—");
    await browser.screenshot("hosts-1280");
    await phone(browser, "hosts-390");
  },
  SLOW,
);

test(
  "a host's page: facts, then the log browser into a nested dir and samples of a file",
  async () => {
    const { page } = browser;
    await rows().filter({ hasText: "ui-host-main" }).getByRole("link").click();
    await page.waitForURL(/\/ui\/hosts\/ui-host-main$/);
    const facts = page.getByRole("table", { name: "Host facts" });
    await facts.waitFor();
    expect(await facts.getByRole("row", { name: /Agent id/ }).textContent()).toContain("ui-host-main");
    expect(await facts.getByRole("row", { name: /Environment/ }).textContent()).toContain("uitest");
    await page.getByRole("heading", { name: "Discovered services" }).waitFor();
    await page.getByRole("heading", { name: "Log sources" }).waitFor();

    // Starts at the first allowed root.
    const listing = page.getByRole("region", { name: "Directory listing" });
    await listing.getByRole("button", { name: "nested/" }).waitFor();
    expect(await listing.getByRole("button", { name: "top.log" }).isVisible()).toBe(true);
    const crumbs = page.getByRole("navigation", { name: "Directory" });
    expect(await crumbs.textContent()).toContain(tree);

    const truncated = page.getByRole("note").filter({ hasText: "truncated" });
    expect(await truncated.count()).toBe(0);
    await listing.getByRole("button", { name: "many/" }).click();
    await truncated.waitFor();
    expect(await listing.locator("tbody tr").count()).toBe(1 + 5); // "up" and five entries
    await crumbs.getByRole("button", { name: tree }).click();

    await listing.getByRole("button", { name: "nested/" }).click();
    await listing.getByRole("button", { name: "app.log" }).waitFor();
    expect(new URL(page.url()).searchParams.get("dir")).toBe(join(tree, "nested"));
    expect(await crumbs.locator("[aria-current]").textContent()).toBe("nested");

    // Lines from the tail (the default): the last lines of the file.
    await listing.getByRole("button", { name: "app.log" }).click();
    const content = page.getByLabel(`Content of ${join(tree, "nested", "app.log")}`);
    await content.waitFor();
    expect(await page.getByRole("radio", { name: "lines" }).isChecked()).toBe(true);
    expect(await page.getByRole("radio", { name: "tail" }).isChecked()).toBe(true);
    await page.getByText(/40 lines from the tail/).waitFor();
    expect(await content.textContent()).toContain("event 40 ok");
    await browser.screenshot("host-sample-lines-tail-1280");

    // Bytes from the head.
    await page.getByRole("radio", { name: "bytes" }).check();
    await page.getByRole("radio", { name: "head" }).check();
    await page.getByText(/bytes from the head/).waitFor();
    expect(new URL(page.url()).searchParams.get("mode")).toBe("bytes");
    expect(new URL(page.url()).searchParams.get("from")).toBe("head");
    expect((await content.textContent())?.startsWith("event 01 ok")).toBe(true);

    // A binary file is flagged, its content not shown.
    await listing.getByRole("button", { name: "blob.bin" }).click();
    await page.getByText("Binary file: its content is not shown.").waitFor();

    await phone(browser, "host-browser-390");

    // Up again by the breadcrumb.
    await crumbs.getByRole("button", { name: tree }).click();
    await listing.getByRole("button", { name: "top.log" }).waitFor();
    expect(new URL(page.url()).searchParams.get("file")).toBeNull();
    await browser.screenshot("host-1280");
  },
  SLOW,
);

test(
  "a path outside the allowed roots is refused with a message naming it",
  async () => {
    const { page } = browser;
    await page.goto(`${server.base}/ui/hosts/ui-host-main?dir=%2Fetc`);
    const alert = page.getByRole("alert").filter({ hasText: "outside" });
    await alert.waitFor();
    expect(await alert.textContent()).toContain("/etc is outside the agent's allowed roots.");
  },
  SLOW,
);

test(
  "an agent with browsing off says so, exactly",
  async () => {
    const { page } = browser;
    await page.goto(`${server.base}/ui/hosts`);
    await rows().filter({ hasText: "ui-host-off" }).getByRole("link").click();
    await page.waitForURL(/\/ui\/hosts\/ui-host-off$/);
    const alert = page.getByRole("alert").filter({ hasText: "log browsing" });
    await alert.waitFor();
    expect((await alert.textContent())?.trim()).toBe("log browsing is disabled by agent configuration");
    await browser.screenshot("host-browse-disabled-1280");
  },
  SLOW,
);

test("no console or page errors during the run", () => {
  browser.assertClean();
});
