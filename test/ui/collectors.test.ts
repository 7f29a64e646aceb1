/**
 * The Collectors page in Debian's chromium against the real server:
 * collectors made through the API, the table's columns and total, rows
 * virtualised (only those in view are in the DOM), the next page fetched by
 * scrolling and by "Load more", names linking to the detail page, the
 * status, tag and text filters narrowing the list and surviving a reload and
 * Back (they live in the URL), rows changing live as an OpAMP client
 * connects and the API edits or adds collectors, a collector without
 * AcceptsRemoteConfig marked reporting only, a notice with Refresh
 * once the live stream has dropped, desktop and phone
 * screenshots, and no console errors.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../harness.ts";
import { description, RawAgent } from "../opamp/helpers.ts";
import { openBrowser, type BrowserSession, signIn } from "./browser.ts";

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
  await signIn(page, server.base, admin, "/ui/collectors");
}, SLOW);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

const table = () => browser.page.getByRole("table", { name: "Collectors" });
/** The body's rows in the DOM: with virtualisation, only those in view. */
const rows = () => table().getByRole("rowgroup").nth(1).getByRole("row");
const names = () => rows().getByRole("rowheader").getByRole("link").allTextContents();
const scrollTable = (to: "top" | "end") => table().evaluate((el, to) => void (el.scrollTop = to === "top" ? 0 : el.scrollHeight), to);
const summary = (text: string) => browser.page.getByText(text, { exact: true }).waitFor();

async function filter(fields: { status?: string; tag?: string; q?: string }) {
  const { page } = browser;
  if (fields.status !== undefined) await page.getByLabel("Status", { exact: true }).selectOption(fields.status);
  if (fields.tag !== undefined) await page.getByLabel("Tag", { exact: true }).fill(fields.tag);
  if (fields.q !== undefined) await page.getByLabel("Search").fill(fields.q);
  await page.getByRole("button", { name: "Filter" }).click();
}

test(
  "the list shows every column and its total, and loads the rest as it scrolls",
  async () => {
    const { page } = browser;
    await summary("Showing 50 of 53 collectors.");
    // Screen readers learn the whole size (header row included) though few rows are in the DOM.
    expect(await table().getAttribute("aria-rowcount")).toBe(String(BULK + 4));
    const inDom = await rows().count();
    expect(inDom).toBeGreaterThan(5);
    expect(inDom).toBeLessThan(40);
    const headers = await page.getByRole("columnheader").allTextContents();
    expect(headers).toEqual(["Name", "Status", "Last seen", "Environment", "Management", "Tags"]);
    await scrollTable("end");
    await summary(`Showing ${BULK + 3} collectors.`);
    expect(await page.getByRole("button", { name: "Load more" }).count()).toBe(0);
    // The rows that loaded grew the table below the first scroll's end: scroll there again and wait for the last row to render.
    await scrollTable("end");
    await rows()
      .and(page.locator(`[aria-rowindex="${BULK + 4}"]`))
      .waitFor();
    const last = rows().last();
    expect(await last.getAttribute("aria-rowindex")).toBe(String(BULK + 4));
    expect(await last.getByRole("rowheader").getByRole("link").innerText()).toBe(`bulk-${BULK - 1}`);

    await scrollTable("top");
    const ledger = rows().filter({ hasText: "ledger-gw" });
    // The virtualiser renders the top rows again on its next frame.
    await ledger.waitFor();
    const cells = await ledger.getByRole("cell").allTextContents();
    // Status is a word, not only a colour; a never-connected collector was never seen.
    expect(cells[0]).toContain("pending");
    expect(cells.slice(1)).toEqual(["never", "prod", "Alloy (remote config)", "team=payments"]);
  },
  SLOW,
);

test(
  "a collector's name links to its detail page",
  async () => {
    const { page } = browser;
    const { items } = await server.call<{ items: { id: string; name: string }[] }>("/collectors?q=ledger-gw");
    const link = rows().getByRole("link", { name: "ledger-gw", exact: true });
    expect(await link.getAttribute("href")).toBe(`/ui/collectors/${items[0]!.id}`);
    await link.click();
    await page.waitForURL(new RegExp(`/ui/collectors/${items[0]!.id}$`));
    // The detail page is a lazily loaded chunk: going back before it shows would only reveal the list as it was.
    await page.getByRole("heading", { name: "ledger-gw", level: 1 }).waitFor();
    await page.goBack();
    await summary("Showing 50 of 53 collectors.");
  },
  SLOW,
);

test(
  "tag, text and status filters narrow the list and live in the URL",
  async () => {
    const { page } = browser;
    await filter({ tag: "team=payments" });
    await summary("Showing 2 collectors.");
    expect(new URL(page.url()).searchParams.get("tag")).toBe("team=payments");
    expect((await names()).sort()).toEqual(["checkout-edge", "ledger-gw"]);
    await browser.screenshot("collectors-filtered-1280");

    await page.reload();
    await summary("Showing 2 collectors.");
    expect(await page.getByLabel("Tag", { exact: true }).inputValue()).toBe("team=payments");

    await filter({ q: "checkout" });
    await summary("Showing 1 collector.");
    expect(await names()).toEqual(["checkout-edge"]);

    await filter({ status: "offline" });
    await summary("No collectors match these filters.");
    expect(new URL(page.url()).search).toBe("?status=offline&tag=team%3Dpayments&q=checkout");

    // Back returns to the previous filters, form included.
    await page.goBack();
    await summary("Showing 1 collector.");
    expect(await page.getByLabel("Status", { exact: true }).inputValue()).toBe("");

    await filter({ status: "pending", tag: "team:search, region", q: "" });
    await summary("No collectors match these filters.");
    // A tag filter has no known total until the last page is in; "Load more" brings it without scrolling.
    await filter({ tag: "team" });
    await summary("Showing 50+ collectors.");
    expect(await table().getAttribute("aria-rowcount")).toBe("-1");
    await page.getByRole("button", { name: "Load more" }).click();
    await summary(`Showing ${BULK + 3} collectors.`);

    await page.getByRole("button", { name: "Clear" }).click();
    await page.waitForURL(/\/ui\/collectors$/);
    await summary("Showing 50 of 53 collectors.");
  },
  SLOW,
);

test(
  "rows change live: a connecting collector goes online, edits show, new ones wait behind a banner",
  async () => {
    const { page } = browser;
    const edge = await server.call<{ id: string }>("/collectors", "POST", { name: "live-edge", tags: { team: "live" } });
    await page.goto(`${server.base}/ui/collectors?tag=team%3Dlive`);
    await summary("Showing 1 collector.");
    const row = rows().first();
    expect(await row.getByRole("cell").first().innerText()).toContain("pending");

    const { token } = await server.call<{ token: string }>("/enrollment-tokens", "POST", { kind: "opamp", collectorId: edge.id });
    const agent = await RawAgent.connect(`${server.base.replace(/^http/, "ws")}/v1/opamp`, token);
    try {
      await agent.call({ agentDescription: description({ "service.name": "live-edge" }) });
      await row.getByRole("cell").first().getByText("online").waitFor();
      expect(await row.getByRole("cell").nth(1).innerText()).not.toBe("never");
    } finally {
      agent.close();
    }

    await server.call(`/collectors/${edge.id}`, "PATCH", { name: "live-edge-renamed" });
    await row.getByRole("link", { name: "live-edge-renamed" }).waitFor();

    // A new matching collector is offered, not pushed into the list under the reader.
    await server.call("/collectors", "POST", { name: "live-new", tags: { team: "live" } });
    await server.call("/collectors", "POST", { name: "not-live", tags: { team: "other" } });
    const banner = page.getByRole("status").filter({ hasText: "new collector" });
    await banner.getByText("1 new collector", { exact: true }).waitFor();
    await banner.getByRole("button", { name: "Show" }).click();
    await summary("Showing 2 collectors.");
    expect(await names()).toEqual(["live-edge-renamed", "live-new"]);

    // A row that stops matching the filters leaves it.
    await server.call(`/collectors/${edge.id}`, "PATCH", { tags: { team: "moved" } });
    await summary("Showing 1 collector.");
    expect(await names()).toEqual(["live-new"]);
  },
  SLOW,
);

test(
  "a collector connected without AcceptsRemoteConfig says it is reporting only, in the list and on its page with the fix",
  async () => {
    const { page } = browser;
    const standalone = await server.call<{ id: string }>("/collectors", "POST", { name: "standalone-otelcol", tags: { team: "standalone" } });
    const { token } = await server.call<{ token: string }>("/enrollment-tokens", "POST", { kind: "opamp", collectorId: standalone.id });
    const agent = await RawAgent.connect(`${server.base.replace(/^http/, "ws")}/v1/opamp`, token);
    try {
      // The collector's opamp extension without the supervisor: ReportsStatus, ReportsEffectiveConfig, ReportsHealth.
      await agent.call({ capabilities: 0x1n | 0x4n | 0x800n, agentDescription: description({ "service.name": "standalone" }) });
      await page.goto(`${server.base}/ui/collectors?tag=team%3Dstandalone`);
      await summary("Showing 1 collector.");
      const note = rows().first().getByText("reporting only — cannot accept remote config");
      await note.waitFor();
      expect(await note.getAttribute("title")).toContain("run it under the OpAMP supervisor");
      await rows().first().getByRole("link", { name: "standalone-otelcol" }).click();
      const notice = page.getByRole("note");
      await notice.getByText("reporting only — cannot accept remote config.").waitFor();
      expect(await notice.innerText()).toContain("run it under the OpAMP supervisor");
    } finally {
      agent.close();
    }
    // A collector that takes remote config shows no such note.
    await page.goto(`${server.base}/ui/collectors?tag=team%3Dlive`);
    await summary("Showing 1 collector.");
    // (The filter form's "Needs attention" offers "reporting only" as a choice: the rows are what is looked at.)
    expect(await table().getByText("reporting only", { exact: false }).count()).toBe(0);
  },
  SLOW,
);

test(
  "after the live stream drops, the page says rows may be stale and Refresh reloads them",
  async () => {
    const { page } = browser;
    await page.goto(`${server.base}/ui/collectors?tag=team%3Dpayments`);
    await summary("Showing 2 collectors.");
    // Ending every open stream, as a server restart would; the browser reconnects by itself.
    server.app.events.close();
    const notice = page.getByRole("status").filter({ hasText: "Live updates were interrupted" });
    await notice.waitFor();
    await notice.getByRole("button", { name: "Refresh" }).click();
    await summary("Showing 2 collectors.");
    expect(await notice.count()).toBe(0);
    expect(new URL(page.url()).searchParams.get("tag")).toBe("team=payments");
  },
  SLOW,
);

test(
  "a bad filter shows the API's error",
  async () => {
    const { page } = browser;
    await page.goto(`${server.base}/ui/collectors?status=sleeping`);
    const alert = page.getByRole("alert");
    await alert.getByText(/HTTP 400/).waitFor();
  },
  SLOW,
);

test(
  "the page fits desktop and a 390 px phone",
  async () => {
    const { page } = browser;
    await page.goto(`${server.base}/ui/collectors?tag=team%3Dpayments`);
    await summary("Showing 2 collectors.");
    await browser.screenshot("collectors-1280");
    await page.setViewportSize({ width: 390, height: 844 });
    // The header is for screen readers only on a phone; each card labels its own values.
    expect(await rows().count()).toBe(2);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBe(0);
    await browser.screenshot("collectors-390");
    await page.setViewportSize({ width: 1280, height: 800 });
  },
  SLOW,
);

test("no console or page errors during the run", () => {
  browser.assertClean();
});
