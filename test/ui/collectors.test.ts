/**
 * The Collectors page in Debian's chromium against the real server:
 * collectors made through the API, the table's columns, "Load more" over
 * the API's cursor, the status, tag and text filters narrowing the list and
 * surviving a reload and Back (they live in the URL), desktop and phone
 * screenshots, and no console errors.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../harness.ts";
import { openBrowser, type BrowserSession } from "./browser.ts";

let server: TestServer;
let browser: BrowserSession;
const SLOW = 30_000;
/** The page asks for 50 at a time; this many makes a second page. */
const BULK = 50;

beforeAll(async () => {
  server = await startTestServer();
  browser = await openBrowser({ width: 1280, height: 800 });
  const make = (body: Record<string, unknown>) => server.call("/collectors", "POST", body);
  await make({ name: "checkout-edge", environment: "prod", tags: { team: "payments", region: "eu" } });
  await make({ name: "ledger-gw", environment: "prod", managementMode: "rcfg-remotecfg", tags: { team: "payments" } });
  await make({ name: "search-indexer", environment: "staging", tags: { team: "search" } });
  await Promise.all(Array.from({ length: BULK }, (_, i) => make({ name: `bulk-${String(i).padStart(2, "0")}`, tags: { team: "bulk" } })));
  const admin = await server.uiAdmin();
  const { page } = browser;
  await page.goto(`${server.base}/ui/login?next=%2Fui%2Fcollectors`);
  await page.getByLabel("Username").fill(admin.username);
  await page.getByLabel("Password").fill(admin.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(/\/ui\/collectors$/);
}, SLOW);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

const rows = () => browser.page.getByRole("region", { name: "Collectors" }).locator("tbody tr");
const summary = (text: string) => browser.page.getByText(text, { exact: true }).waitFor();

async function filter(fields: { status?: string; tag?: string; q?: string }) {
  const { page } = browser;
  if (fields.status !== undefined) await page.getByLabel("Status", { exact: true }).selectOption(fields.status);
  if (fields.tag !== undefined) await page.getByLabel("Tag", { exact: true }).fill(fields.tag);
  if (fields.q !== undefined) await page.getByLabel("Search").fill(fields.q);
  await page.getByRole("button", { name: "Filter" }).click();
}

test("the list shows every column and loads more over the cursor", async () => {
  const { page } = browser;
  await summary(`Showing 50+ collectors.`);
  expect(await rows().count()).toBe(50);
  const headers = await page.getByRole("columnheader").allTextContents();
  expect(headers).toEqual(["Name", "Status", "Last seen", "Environment", "Management", "Tags"]);
  await page.getByRole("button", { name: "Load more" }).click();
  await summary(`Showing ${BULK + 3} collectors.`);
  expect(await rows().count()).toBe(BULK + 3);
  expect(await page.getByRole("button", { name: "Load more" }).count()).toBe(0);

  const ledger = rows().filter({ hasText: "ledger-gw" });
  const cells = await ledger.locator("td").allTextContents();
  // Status is a word, not only a colour; a never-connected collector was never seen.
  expect(cells[0]).toContain("pending");
  expect(cells.slice(1)).toEqual(["never", "prod", "remotecfg", "team=payments"]);
}, SLOW);

test("tag, text and status filters narrow the list and live in the URL", async () => {
  const { page } = browser;
  await filter({ tag: "team=payments" });
  await summary("Showing 2 collectors.");
  expect(new URL(page.url()).searchParams.get("tag")).toBe("team=payments");
  expect((await rows().locator("th .name").allTextContents()).sort()).toEqual(["checkout-edge", "ledger-gw"]);
  await browser.screenshot("collectors-filtered-1280");

  await page.reload();
  await summary("Showing 2 collectors.");
  expect(await page.getByLabel("Tag", { exact: true }).inputValue()).toBe("team=payments");

  await filter({ q: "checkout" });
  await summary("Showing 1 collector.");
  expect(await rows().locator("th .name").allTextContents()).toEqual(["checkout-edge"]);

  await filter({ status: "offline" });
  await summary("No collectors match these filters.");
  expect(new URL(page.url()).search).toBe("?status=offline&tag=team%3Dpayments&q=checkout");

  // Back returns to the previous filters, form included.
  await page.goBack();
  await summary("Showing 1 collector.");
  expect(await page.getByLabel("Status", { exact: true }).inputValue()).toBe("");

  await filter({ status: "pending", tag: "team:search, region", q: "" });
  await summary("No collectors match these filters.");
  await filter({ tag: "team" });
  await summary(`Showing 50+ collectors.`);

  await page.getByRole("button", { name: "Clear" }).click();
  await page.waitForURL(/\/ui\/collectors$/);
  await summary(`Showing 50+ collectors.`);
}, SLOW);

test("a bad filter shows the API's error", async () => {
  const { page } = browser;
  await page.goto(`${server.base}/ui/collectors?status=sleeping`);
  const alert = page.getByRole("alert");
  await alert.getByText(/HTTP 400/).waitFor();
}, SLOW);

test("the page fits desktop and a 390 px phone", async () => {
  const { page } = browser;
  await page.goto(`${server.base}/ui/collectors?tag=team%3Dpayments`);
  await summary("Showing 2 collectors.");
  await browser.screenshot("collectors-1280");
  await page.setViewportSize({ width: 390, height: 844 });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  expect(overflow).toBe(0);
  await browser.screenshot("collectors-390");
  await page.setViewportSize({ width: 1280, height: 800 });
}, SLOW);

test("no console or page errors during the run", () => {
  browser.assertClean();
});
