/**
 * Each "Needs attention" count is a link to exactly the collectors it counts
 * (issue 34 part 1), in Debian's chromium against the real server with a
 * collector in every state made by real OpAMP agents (test/attention-fleet.ts):
 * clicking a count opens the Collectors page filtered by that reason, showing
 * the filter and just those collectors, each row badged with why; Clear shows
 * the whole fleet again. In the whole list, pinned, drifted and failed rows each
 * carry a labelled badge of their own shape and tone, and runtimes go by their
 * one name (shared/vocabulary.ts RUNTIME_NAMES), in the rows and the add form.
 * No console errors.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { AttentionReason } from "../../shared/attention.ts";
import { RUNTIME_NAMES } from "../../shared/vocabulary.ts";
import { EXPECTED, seedAttentionFleet } from "../attention-fleet.ts";
import { startTestServer, type TestServer } from "../harness.ts";
import type { RawAgent } from "../opamp/helpers.ts";
import { openBrowser, signIn, type BrowserSession } from "./browser.ts";

let server: TestServer;
let browser: BrowserSession;
const agents: RawAgent[] = [];

beforeAll(async () => {
  server = await startTestServer();
  browser = await openBrowser({ width: 1440, height: 900 });
  await seedAttentionFleet(server, agents);
}, 120_000);

afterAll(async () => {
  for (const agent of agents) agent.close();
  await browser?.close();
  await server?.stop();
});

/** Each count's label on the dashboard, and the badge a row of it shows (none where the status or the reporting-only note says it). */
const SHOWN: Record<AttentionReason, { label: string; badge: string | null }> = {
  failed: { label: "failed", badge: "failed" },
  offline: { label: "offline", badge: null },
  unrenderable: { label: "cannot render", badge: "cannot render" },
  pinned: { label: "pinned", badge: "pinned" },
  drifted: { label: "drifted", badge: "drifted" },
  reportingOnly: { label: "reporting only", badge: null },
};

test("clicking each count shows exactly the collectors it counts, the filter applied, and Clear shows them all", async () => {
  const { page } = browser;
  await signIn(page, server.base, await server.uiAdmin(), "/ui/dashboard");
  const table = page.getByRole("table", { name: "Collectors" });
  const rows = table.getByRole("rowgroup").nth(1).getByRole("row");
  for (const [reason, { label, badge }] of Object.entries(SHOWN) as [AttentionReason, (typeof SHOWN)[AttentionReason]][]) {
    const expected = EXPECTED[reason];
    await page
      .getByRole("region", { name: "Needs attention", exact: true })
      .getByRole("link", { name: `${expected.length} ${label}`, exact: true })
      .click();
    await page.waitForURL((url) => url.pathname === "/ui/collectors" && url.searchParams.get("attention") === reason);
    await page.getByText(`Showing ${expected.length} collector${expected.length === 1 ? "" : "s"}.`, { exact: true }).waitFor();
    expect({ reason, names: await rows.getByRole("rowheader").getByRole("link").allTextContents() }).toEqual({ reason, names: expected });
    // The filter is shown, as the form's own choice.
    expect(await page.getByLabel("Needs attention", { exact: true }).inputValue()).toBe(reason);
    if (badge) expect(await rows.first().locator(".cell-status").textContent()).toContain(badge);
    await page.goBack();
    await page.waitForURL((url) => url.pathname === "/ui/dashboard");
  }
  await browser.screenshot("dashboard-attention-links-1440");

  // A row is badged in the unfiltered list too; Clear drops the filter.
  await page.goto(`${server.base}/ui/collectors?attention=pinned`);
  await page.getByText("Showing 1 collector.", { exact: true }).waitFor();
  await page.getByRole("button", { name: "Clear" }).click();
  await page.waitForURL((url) => url.pathname === "/ui/collectors" && url.search === "");
  await page.getByText("Showing 7 collectors.", { exact: true }).waitFor();
  const failing = rows.filter({ has: page.getByRole("link", { name: "failing", exact: true }) });
  expect(await failing.locator(".cell-status").textContent()).toContain("failed");
  const good = rows.filter({ has: page.getByRole("link", { name: "good", exact: true }) });
  expect(await good.locator(".cell-status .status").count()).toBe(1);
  await browser.screenshot("collectors-attention-1440");
  browser.assertClean();
}, 120_000);

test("pinned, drifted and failed collectors each stand out in the whole list by a labelled badge of their own; runtimes by their one name", async () => {
  const { page } = browser;
  await page.goto(`${server.base}/ui/collectors`);
  await page.getByText("Showing 7 collectors.", { exact: true }).waitFor();
  const rows = page.getByRole("table", { name: "Collectors" }).getByRole("rowgroup").nth(1).getByRole("row");
  const row = (name: string) => rows.filter({ has: page.getByRole("link", { name, exact: true }) });
  /** A row's status badges as shown: the word, the shape beside it and the tone. */
  const badges = (name: string) =>
    row(name)
      .locator(".cell-status .status")
      .evaluateAll((spans) =>
        spans.map((s) => ({
          symbol: s.querySelector(".status-symbol")!.textContent,
          label: s.textContent!.replace(s.querySelector(".status-symbol")!.textContent!, ""),
          tone: [...s.classList].find((c) => c.startsWith("tone-")),
        })),
      );
  const good = await badges("good");
  expect(good.map((b) => b.label)).toEqual(["online"]);
  const marks: Record<string, { symbol: string | null; tone: string | undefined }> = { online: good[0]! };
  for (const [name, label] of [
    ["pinned", "pinned"],
    ["drifting", "drifted"],
    ["failing", "failed"],
  ] as const) {
    const mark = (await badges(name)).find((b) => b.label === label);
    expect({ name, label: mark?.label }).toEqual({ name, label });
    marks[label] = mark!;
  }
  // No two of online, pinned, drifted and failed share a shape or a tone.
  expect(new Set(Object.values(marks).map((m) => m.symbol)).size).toBe(4);
  expect(new Set(Object.values(marks).map((m) => m.tone)).size).toBe(4);

  // The fleet is OpAMP: its rows name the runtime one way, and the add form offers both by name.
  expect(await row("good").locator(".cell-mode").textContent()).toBe(RUNTIME_NAMES.otelcol);
  // The name fits its column (it wraps; nothing runs into the tags beside it).
  expect(
    await row("good")
      .locator(".cell-mode")
      .evaluate((cell) => cell.scrollWidth <= cell.clientWidth),
  ).toBe(true);
  await page.getByRole("button", { name: "Add collector" }).click();
  const form = page.getByRole("form", { name: "Add a collector" });
  for (const name of Object.values(RUNTIME_NAMES)) await form.getByRole("radio", { name: new RegExp(`^${name.replace(/[()]/g, "\\$&")}`) }).waitFor();
  expect(await form.textContent()).not.toMatch(/Runtime [OR]|remotecfg/);
  await browser.screenshot("collectors-badges-1440");
  browser.assertClean();
}, 120_000);
