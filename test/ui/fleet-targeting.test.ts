/**
 * Fleet targeting in Debian's chromium against the real server: a pipeline
 * created in the UI is given matchers row by row (a syntax error shown with
 * its column as it is typed, the live count and sample following each
 * matcher), saved, committed and published from the Changes page; the
 * matched collector connected over a real OpAMP WebSocket receives the
 * pipeline without any activation or route, and its page says why it
 * matched (each matcher with the attribute it read and where that came
 * from: reported by the collector on a key an admin trusts, or a tag set in
 * svc; an untrusted reported one is marked so). The collectors list
 * filters by matchers kept in the URL, tags a ticked selection in bulk, and
 * tags every collector the matchers select, beyond the loaded page. No
 * console errors.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Collector } from "../../shared/collectors.ts";
import type { PipelineRecord } from "../../shared/config-records.ts";
import { startTestServer, type TestServer } from "../harness.ts";
import { applied, description, RawAgent } from "../opamp/helpers.ts";
import { openBrowser, phone, signIn, type BrowserSession } from "./browser.ts";

let server: TestServer;
let browser: BrowserSession;
let agent: RawAgent;
let pay1: string;
let pipelineId = "";
const SLOW = 30_000;
/** Collectors made only to outnumber the list's first page (50). */
const BULK = 60;

const call = <T = Record<string, unknown>>(path: string, method?: string, json?: unknown) => server.call<T>(path, method, json);
const collector = (id: string) => call<Collector>(`/collectors/${id}`);

beforeAll(async () => {
  server = await startTestServer();
  browser = await openBrowser({ width: 1280, height: 800 });
  await call("/sources", "POST", { name: "app logs", type: "filelog", config: { include: ["/var/log/payments/*.log"] } });
  await call("/destinations", "POST", { name: "backend", type: "otlphttp", config: { endpoint: "https://otlp.example.com" } });
  const make = (name: string, tags: Record<string, string>) => call<{ id: string }>("/collectors", "POST", { name, tags }).then((c) => c.id);
  // pay-1 reports its region; pay-2 has it as a tag; pay-us is in another region; search-1 is another team.
  pay1 = await make("pay-1", { team: "payments" });
  await make("pay-2", { team: "payments", region: "eu-central" });
  await make("pay-us", { team: "payments", region: "us-east" });
  await make("search-1", { team: "search", region: "eu-west" });
  for (let i = 0; i < BULK; i++) await make(`bulk-${String(i).padStart(2, "0")}`, { fleet: "bulk" });
  const { token } = await call<{ token: string }>("/enrollment-tokens", "POST", { kind: "opamp", collectorId: pay1 });
  agent = await RawAgent.connect(`${server.base.replace(/^http/, "ws")}/v1/opamp`, token);
  await agent.call({ agentDescription: description({ "service.name": "pay-1" }, { region: "eu-west" }) });
  expect((await collector(pay1)).reported).toEqual({ region: "eu-west", "service.name": "pay-1" });
  // Matchers read a reported key only once an admin trusts it (test/api/trusted-targeting.test.ts).
  await call("/system/trusted-attributes", "PUT", { keys: ["region"] });

  const admin = await server.uiAdmin();
  browser.page.setDefaultTimeout(10_000);
  await signIn(browser.page, server.base, admin, "/ui/pipelines");
}, 60_000);

afterAll(async () => {
  agent?.close();
  await browser?.close();
  await server?.stop();
});

const targeting = () => browser.page.getByRole("region", { name: "Collectors" });
const reach = () => browser.page.locator("#canvas-reach");

test(
  "a pipeline created in the UI gets matchers: a syntax error shows its column, the count and sample follow each matcher",
  async () => {
    const { page } = browser;
    await page.getByLabel("Name").fill("payments logs");
    await page.getByRole("button", { name: "Create pipeline" }).click();
    await page.waitForURL(/\/ui\/pipelines\/[^/]+$/);
    pipelineId = decodeURIComponent(new URL(page.url()).pathname.split("/").at(-1)!);
    // Without matchers the canvas says it runs only where routes attach it.
    expect(await reach().textContent()).toStartWith("Runs only where a route attaches it");
    await targeting().getByText("No matchers: only collectors whose routes name this pipeline run it.").waitFor();

    await page.getByRole("button", { name: "Add source app logs" }).click();
    await page.getByRole("button", { name: "Add destination backend" }).click();
    await page.getByLabel("From", { exact: true }).selectOption("app-logs");
    await page.getByLabel("To", { exact: true }).selectOption("backend");
    await page.getByRole("button", { name: "Connect" }).click();
    await page.getByRole("button", { name: "Save", exact: true }).click();
    await page.getByText("Saved", { exact: true }).waitFor();

    const first = targeting().getByRole("textbox", { name: "Matcher 1" });
    await first.fill("team=");
    expect(await first.getAttribute("aria-invalid")).toBe("true");
    await targeting().getByText("column 6: unexpected end of input; expected a value").waitFor();
    expect(await targeting().getByRole("button", { name: "Save matchers" }).isDisabled()).toBe(true);
    await first.fill("team=payments");
    await targeting().getByText("3 collectors match.").waitFor();
    expect(await first.getAttribute("aria-invalid")).toBeNull();
    const sample = targeting().getByRole("list", { name: "Matching collectors" });
    expect(await sample.getByRole("link").allTextContents()).toEqual(["pay-1", "pay-2", "pay-us"]);

    await targeting().getByRole("button", { name: "Add matcher" }).click();
    await targeting().getByRole("textbox", { name: "Matcher 2" }).fill('region=~"eu-.*"');
    await targeting().getByText("2 collectors match.").waitFor();
    expect(await sample.getByRole("link").allTextContents()).toEqual(["pay-1", "pay-2"]);
    await targeting().getByRole("button", { name: "Save matchers" }).click();
    await targeting()
      .getByText(/^Saved: pending until committed/)
      .waitFor();
    await browser.screenshot("fleet-pipeline-matchers-1280");
    expect((await call<PipelineRecord>(`/pipelines/${pipelineId}`)).matchers).toEqual(["team=payments", 'region=~"eu-.*"']);
    // The canvas now says the graph runs as drawn on what the matchers select, no activation asked for.
    expect(await reach().textContent()).toStartWith("Runs as drawn on every collector the matchers select");
    // The pipelines list shows them too.
    await page.getByRole("link", { name: "← Pipelines" }).click();
    const listed = page.getByRole("list", { name: "Matchers of payments logs" }).getByRole("listitem");
    // The list page loads its pipelines after it shows: wait for them before reading.
    await listed.nth(1).waitFor();
    expect(await listed.allTextContents()).toEqual(["team=payments", 'region=~"eu-.*"']);
  },
  SLOW,
);

test(
  "committed and published from the Changes page, the matched collector receives the pipeline with no activation or route",
  async () => {
    const { page } = browser;
    await page.goto(`${server.base}/ui/changes`);
    const form = page.getByRole("form", { name: "Commit pending changes" });
    await form.getByLabel("Commit message").fill("Payments logs for the EU fleet");
    await form.getByRole("button", { name: "Commit" }).click();
    await page.getByRole("region", { name: "Commits, newest first" }).getByText("Payments logs for the EU fleet").waitFor();
    const pushed = agent.next((m) => m.remoteConfig !== undefined, 10_000);
    await page.getByRole("button", { name: "Review and publish" }).click();
    await page.getByRole("form", { name: "Publish plan" }).getByRole("button", { name: "Confirm and publish" }).click();
    const message = await pushed;
    expect(new TextDecoder().decode(message.remoteConfig!.config!.configMap[""]!.body)).toContain("/var/log/payments/*.log");
    await agent.call({ remoteConfigStatus: applied(message.remoteConfig!.configHash) });
    expect(await call(`/collectors/${pay1}/sources`)).toMatchObject({ items: [] });
    expect(await call("/routes")).toMatchObject({ items: [] });
  },
  SLOW,
);

test(
  "the matched collector's page says why: each matcher with the attribute it read and where that came from",
  async () => {
    const { page } = browser;
    await page.goto(`${server.base}/ui/pipelines/${encodeURIComponent(pipelineId)}`);
    await targeting().getByRole("list", { name: "Matching collectors" }).getByRole("link", { name: "pay-1" }).click();
    await page.waitForURL((url) => url.pathname === `/ui/collectors/${pay1}`);
    const section = page.getByRole("region", { name: "Pipelines" });
    await section.getByRole("link", { name: "payments logs" }).waitFor();
    expect(await section.locator(".applied-pipelines > li > .muted").textContent()).toBe("matches all of its matchers:");
    expect(await section.locator(".matcher-reasons li").allTextContents()).toEqual([
      'team=payments — team is "payments" (set in svc)',
      'region=~"eu-.*" — region is "eu-west" (reported by the collector, trusted)',
    ]);
    const reported = page.getByRole("table", { name: "Collector facts" }).getByRole("row", { name: "Reported attributes" });
    expect(await reported.getByRole("listitem").allTextContents()).toEqual(["region=eu-west (trusted)", "service.name=pay-1 (reported)"]);
    await browser.screenshot("fleet-collector-why-1280");
  },
  SLOW,
);

test(
  "the collectors list filters by matchers kept in the URL, and tags a ticked selection in bulk",
  async () => {
    const { page } = browser;
    await page.goto(`${server.base}/ui/collectors`);
    const filters = page.getByRole("search", { name: "Filter collectors" });
    await filters.getByRole("textbox", { name: "Matcher 1" }).fill("team=payments");
    await filters.getByRole("button", { name: "Add matcher" }).click();
    await filters.getByRole("textbox", { name: "Matcher 2" }).fill('region!~"us-.*"');
    await filters.getByRole("button", { name: "Filter" }).click();
    await page.getByText("Showing 2 collectors.").waitFor();
    expect(new URL(page.url()).searchParams.getAll("match")).toEqual(["team=payments", 'region!~"us-.*"']);
    // A reload (or a shared link) reproduces the filter.
    await page.reload();
    await page.getByText("Showing 2 collectors.").waitFor();
    expect(await filters.getByRole("textbox", { name: "Matcher 2" }).inputValue()).toBe('region!~"us-.*"');
    const names = () => page.getByRole("table", { name: "Collectors" }).locator(".cell-name .name").allTextContents();
    expect(await names()).toEqual(["pay-1", "pay-2"]);

    await page.getByRole("checkbox", { name: "Select all loaded collectors" }).check();
    const bar = page.getByRole("region", { name: "2 selected" });
    await bar.getByLabel("Tags to set").fill("tier=gold, owner=ops");
    await bar.getByRole("button", { name: "Set tags" }).click();
    await page.getByText("Setting tags tier=gold, owner=ops: 2 of 2 done (2 changed).").waitFor();
    expect((await collector(pay1)).tags).toEqual({ team: "payments", tier: "gold", owner: "ops" });
    // Those done leave the selection; tick one again and remove a tag from it alone.
    await page.getByRole("checkbox", { name: "Select pay-2" }).check();
    const one = page.getByRole("region", { name: "1 selected" });
    await one.getByLabel("Tags to remove").fill("owner");
    await one.getByRole("button", { name: "Remove tags" }).click();
    await page.getByText("Removing tags owner: 1 of 1 done (1 changed).").waitFor();
    expect((await collector(pay1)).tags.owner).toBe("ops");
    const all = await call<{ items: Collector[] }>(`/collectors?match=${encodeURIComponent("collector.name=pay-2")}`);
    expect(all.items[0]!.tags).toEqual({ team: "payments", region: "eu-central", tier: "gold" });
    // A matcher that does not parse in a hand-edited link: the API's answer names it.
    await page.goto(`${server.base}/ui/collectors?match=${encodeURIComponent("team=")}`);
    await page
      .getByText(/match\[0\]|Invalid matcher/)
      .first()
      .waitFor();
    await phone(browser, "fleet-collectors-390");
  },
  SLOW,
);

test(
  "every collector the matchers select is tagged, beyond the loaded page",
  async () => {
    const { page } = browser;
    await page.goto(`${server.base}/ui/collectors?match=fleet%3Dbulk`);
    await page.getByText(`Showing 50 of ${BULK} collectors.`).waitFor();
    await page.getByRole("checkbox", { name: "Select all loaded collectors" }).check();
    await page.getByRole("button", { name: `Select all ${BULK} matching` }).click();
    const bar = page.getByRole("region", { name: `All ${BULK} matching selected` });
    // Environment and delete act per loaded row, so they are not offered for "all matching".
    expect(await bar.getByRole("button", { name: "Delete selected" }).count()).toBe(0);
    await bar.getByLabel("Tags to set").fill("wave=1");
    await bar.getByRole("button", { name: "Set tags" }).click();
    await page.getByText(`Setting tags wave=1: ${BULK} of ${BULK} done (${BULK} changed).`).waitFor();
    const tagged = await call<{ items: Collector[] }>(`/collectors?limit=1000&match=${encodeURIComponent("wave=1")}`);
    expect(tagged.items.map((c) => c.name).sort()).toEqual(Array.from({ length: BULK }, (_, i) => `bulk-${String(i).padStart(2, "0")}`));
  },
  SLOW,
);

test("no console or page errors", () => {
  browser.assertClean();
});
