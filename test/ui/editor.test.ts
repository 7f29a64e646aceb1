/**
 * The pipeline editor feels direct, in Debian's chromium against the real
 * server: the canvas takes the page width; a click on a node opens its
 * settings beside the canvas (not below it); nodes added by click from the
 * palette are placed and wired where they belong (a processor after the
 * selected node, its edges re-wired); moving a box and saving makes no
 * pending change (positions are layout, kept outside the git tree) while a
 * real edit does; the dry-run shows each record's attributes and resource
 * and the step that dropped it; live rates from a collector's own metrics
 * on nodes and edges, errors marked; node text at least 12 px on screen; both
 * widths; no console errors.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { parse } from "yaml";
import { startTestServer, type TestServer } from "../harness.ts";
import { openBrowser, type BrowserSession, signIn } from "./browser.ts";

let server: TestServer;
let browser: BrowserSession;
const SLOW = 30_000;

beforeAll(async () => {
  server = await startTestServer();
  browser = await openBrowser({ width: 1440, height: 900 });
  await server.call("/sources", "POST", { name: "app logs", type: "filelog", config: { include: ["/var/log/app/*.log"] } });
  await server.call("/destinations", "POST", { name: "backend", type: "debug", config: {} });
  await server.call("/pipelines", "POST", { name: "direct", signal: "logs" });
  const admin = await server.uiAdmin();
  const { page } = browser;
  page.setDefaultTimeout(10_000);
  await signIn(page, server.base, admin, "/ui/pipelines");
  await page.getByRole("link", { name: "direct" }).click();
  await page.getByRole("heading", { name: "direct", level: 1 }).waitFor();
}, SLOW);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

const canvas = () => browser.page.getByRole("group", { name: "Pipeline canvas" });
const canvasNode = (id: string) => canvas().locator(`.react-flow__node[data-id="${id}"]`);
/**
 * The nodes' boxes on screen, read in one frame: adding a node animates the viewport (fitView),
 * so boxes read one call at a time may come from different frames and disagree by the pan.
 */
type Box = { x: number; y: number; width: number; height: number };
const boxes = async <const Ids extends string[]>(...ids: Ids) =>
  (await browser.page.evaluate(
    (ids) =>
      ids.map((id) => {
        const r = document.querySelector(`.react-flow__node[data-id="${id}"]`)!.getBoundingClientRect();
        return { x: r.x, y: r.y, width: r.width, height: r.height };
      }),
    ids,
  )) as { [K in keyof Ids]: Box };
const panel = (id: string) => browser.page.getByRole("region", { name: `Settings of ${id}` });
const edgeTexts = async () =>
  (
    await browser.page
      .getByRole("list", { name: /^Edges/ })
      .locator(":scope > li > span")
      .allTextContents()
  ).sort();

test(
  "the canvas uses the page width",
  async () => {
    const frame = (await canvas().boundingBox())!;
    // Palette (15rem) and gaps aside, the canvas has the rest of the 1440 px page.
    expect(frame.width).toBeGreaterThan(1100);
  },
  SLOW,
);

test(
  "sources and destinations added by click are wired to each other",
  async () => {
    const { page } = browser;
    await page.getByRole("button", { name: "Add source app logs" }).click();
    await panel("app-logs").waitFor();
    await page.getByRole("button", { name: "Add destination backend" }).click();
    await panel("backend").waitFor();
    expect(await edgeTexts()).toEqual(["app logs (app-logs) → backend (backend)"]);
    const [source, destination] = await boxes("app-logs", "backend");
    expect(destination.x).toBeGreaterThan(source.x + source.width);
  },
  SLOW,
);

test(
  "a click on a node opens its settings beside the canvas",
  async () => {
    const { page } = browser;
    await canvasNode("app-logs").click();
    await panel("app-logs").waitFor();
    expect(await panel("backend").count()).toBe(0);
    const frame = (await canvas().boundingBox())!;
    const box = (await panel("app-logs").boundingBox())!;
    expect(box.x).toBeGreaterThanOrEqual(frame.x + frame.width);
    expect(box.y).toBeLessThan(frame.y + frame.height);
    await page.getByRole("button", { name: "Close node settings" }).click();
    expect(await panel("app-logs").count()).toBe(0);
  },
  SLOW,
);

test(
  "a processor added by click goes after the selected node, re-wired, and its settings open",
  async () => {
    const { page } = browser;
    await canvasNode("app-logs").click();
    await page.getByRole("button", { name: "Add processor Drop Health Check Logs" }).click();
    const settings = panel("drop-health-check-logs");
    await settings.waitFor();
    expect(await edgeTexts()).toEqual(["Filter (drop-health-check-logs) → backend (backend)", "app logs (app-logs) → Filter (drop-health-check-logs)"]);
    // Placed between its neighbours, not at the origin.
    const [a, f, b] = await boxes("app-logs", "drop-health-check-logs", "backend");
    expect(f.x).toBeGreaterThan(a.x + a.width);
    expect(b.x).toBeGreaterThan(f.x + f.width);
    // The panel edits the same processor as the chain does.
    expect((await settings.getByLabel("Conditions").inputValue()).split("\n")).toHaveLength(3);
    await settings.getByLabel("Conditions").fill('severity_text == "DEBUG"');
    expect(await page.getByLabel("Conditions of drop-health-check-logs").inputValue()).toBe('severity_text == "DEBUG"');
    await browser.screenshot("editor-panel-1440");

    // With nothing selected, a processor goes at the end of the chain.
    await settings.getByRole("button", { name: "Close node settings" }).click();
    await page.getByRole("button", { name: "Add processor Batch" }).click();
    await panel("batch").waitFor();
    expect(await edgeTexts()).toEqual([
      "Batch (batch) → backend (backend)",
      "Filter (drop-health-check-logs) → Batch (batch)",
      "app logs (app-logs) → Filter (drop-health-check-logs)",
    ]);
    // Remove in the panel joins the neighbours again.
    await panel("batch").getByRole("button", { name: "Remove batch" }).click();
    expect(await edgeTexts()).toEqual(["Filter (drop-health-check-logs) → backend (backend)", "app logs (app-logs) → Filter (drop-health-check-logs)"]);
  },
  SLOW,
);

test(
  "moving a box is layout, not a pending change; a real edit still is one",
  async () => {
    const { page } = browser;
    await page.getByRole("button", { name: "Save", exact: true }).click();
    await page.getByRole("status").getByText("Saved", { exact: true }).waitFor();
    await server.call("/commit", "POST", { message: "the direct pipeline" });
    const pending = async () => (await server.call<{ items: { path: string }[] }>("/changes")).items.map((i) => i.path);
    expect(await pending()).toEqual([]);

    // Drag the destination's card down, away from the row, and save.
    const before = (await canvasNode("backend").boundingBox())!;
    await page.mouse.move(before.x + before.width / 2, before.y + 10);
    await page.mouse.down();
    await page.mouse.move(before.x + before.width / 2, before.y + 60, { steps: 5 });
    await page.mouse.move(before.x + before.width / 2, before.y + 130, { steps: 5 });
    await page.mouse.up();
    await page.getByRole("status").getByText("Unsaved changes").waitFor();
    await page.getByRole("button", { name: "Save", exact: true }).click();
    await page.getByRole("status").getByText("Saved", { exact: true }).waitFor();
    expect(await pending()).toEqual([]);

    // The position was kept (outside the git tree): a reload shows the card where it was dropped.
    await page.reload();
    await canvasNode("backend").waitFor();
    const [source, moved] = await boxes("app-logs", "backend");
    expect(moved.y - source.y).toBeGreaterThan(40);

    // A real edit is still a pending change.
    await canvasNode("drop-health-check-logs").click();
    await panel("drop-health-check-logs").getByLabel("Conditions").fill('severity_text == "TRACE"');
    await page.getByRole("button", { name: "Save", exact: true }).click();
    await page.getByRole("status").getByText("Saved", { exact: true }).waitFor();
    expect((await pending()).filter((path) => path.startsWith("pipelines/"))).toHaveLength(1);
  },
  SLOW,
);

test(
  "the dry-run shows each record's attributes and resource, and which step dropped it",
  async () => {
    const { page } = browser;
    await canvasNode("drop-health-check-logs").click();
    await panel("drop-health-check-logs").getByLabel("Conditions").fill('IsMatch(body, "/healthz") or attributes["http.target"] == "/live"');
    await page.getByRole("button", { name: "Load mixed sample" }).click();
    await page.getByRole("button", { name: "Run" }).click();
    const table = page.getByRole("region", { name: "Records" });
    const row = (body: string) => table.getByRole("row", { name: body });
    await row("GET /healthz HTTP/1.1 200").waitFor();
    expect(await row("GET /healthz HTTP/1.1 200").getByRole("cell").allTextContents()).toEqual([
      "1",
      "none",
      "service.name=checkout",
      "Dropped by drop-health-check-logs",
    ]);
    expect(await row("request served").getByRole("cell").allTextContents()).toEqual([
      "5",
      "http.target=/live",
      "service.name=checkout",
      "Dropped by drop-health-check-logs",
    ]);
    expect(await row("GET /readyz HTTP/1.1 200").getByRole("cell").last().textContent()).toBe("Kept");
    await page.getByText("5 records survive 1 step.").waitFor();
    await page.getByRole("region", { name: "Final output" }).getByText("resource service.name=checkout").first().waitFor();
    await table.scrollIntoViewIfNeeded();
    await browser.screenshot("editor-dry-run-1440");
  },
  SLOW,
);

/** OTLP JSON of cumulative counters named like a collector's own metrics, at `seconds`. */
function ownMetrics(seconds: number, series: [name: string, value: number, attributes: Record<string, string>][]) {
  const point = (value: number, attributes: Record<string, string>) => ({
    attributes: Object.entries(attributes).map(([key, v]) => ({ key, value: { stringValue: v } })),
    startTimeUnixNano: "1000000000",
    timeUnixNano: String(BigInt(seconds) * 1_000_000_000n),
    asDouble: value,
  });
  const metrics = series.map(([name, value, attributes]) => ({
    name,
    sum: { aggregationTemporality: 2, isMonotonic: true, dataPoints: [point(value, attributes)] },
  }));
  return { resourceMetrics: [{ scopeMetrics: [{ metrics }] }] };
}

test(
  "the canvas shows live rates on nodes and edges, summed over the collectors, and marks rising errors",
  async () => {
    const { page } = browser;
    await page.getByRole("button", { name: "Save", exact: true }).click();
    await page.getByRole("status").getByText("Saved", { exact: true }).waitFor();
    const pipeline = (await server.call<{ items: { id: string; name: string }[] }>("/pipelines")).items.find((p) => p.name === "direct")!;
    const source = (await server.call<{ items: { id: string }[] }>("/sources")).items[0]!;
    const destination = (await server.call<{ items: { id: string }[] }>("/destinations")).items[0]!;
    const collector = await server.call<{ id: string }>("/collectors", "POST", { name: "web-1", environment: "prod" });
    await server.call(`/collectors/${collector.id}/sources`, "POST", { sourceId: source.id, configOverrides: {} });
    await server.call(`/collectors/${collector.id}/destinations`, "POST", { destinationId: destination.id, configOverrides: {} });
    await server.call("/routes", "POST", { collectorId: collector.id, sourceId: source.id, pipelineId: pipeline.id });
    await server.call("/commit", "POST", { message: "route" });
    await server.call(`/publish/${collector.id}`, "POST");
    const rendered = parse((await server.app.delivery.target(collector.id))!.rendered.body) as {
      processors: Record<string, unknown>;
      receivers: Record<string, unknown>;
    };
    const filter = Object.keys(rendered.processors).find((name) => name.startsWith("filter/"))!;
    const receiver = Object.keys(rendered.receivers)[0]!;
    const token = (await server.call<{ token: string }>(`/collectors/${collector.id}/otlp-token`, "POST")).token;
    for (const [seconds, n] of [
      [1000, 0],
      [1010, 1],
    ] as const) {
      const body = ownMetrics(seconds, [
        ["otelcol_receiver_accepted_log_records", 1000 * n, { receiver }],
        ["otelcol_processor_incoming_items", 1000 * n, { processor: filter, "otel.signal": "logs" }],
        ["otelcol_processor_outgoing_items", 600 * n, { processor: filter, "otel.signal": "logs" }],
        ["otelcol_processor_refused_log_records", 50 * n, { processor: filter }],
      ]);
      const res = await fetch(`${server.base}/v1/metrics`, {
        method: "POST",
        headers: { "Content-Type": "application/json", Authorization: `Bearer ${token}` },
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(200);
    }
    await page.reload();
    await page.getByText("Summed over 1 of 1 collector.").waitFor();
    const rates = (id: string) => canvasNode(id).locator(".pipeline-node-rates");
    await rates("drop-health-check-logs").getByText("in 100/s · out 60/s").waitFor();
    await rates("drop-health-check-logs").getByText("⚠ errors 5/s").waitFor();
    expect(await canvasNode("drop-health-check-logs").locator(".pipeline-node.errors-rising").count()).toBe(1);
    await rates("app-logs").getByText("out 100/s").waitFor();
    expect(await rates("backend").textContent()).toBe("in 60/s · out –");
    await canvas()
      .getByRole("group", { name: /: 60\/s$/ })
      .first()
      .waitFor({ state: "attached" });
    // One collector picked instead of the sum.
    await page.getByLabel("Live rates").selectOption({ label: "web-1" });
    await rates("drop-health-check-logs").getByText("in 100/s · out 60/s").waitFor();
    await browser.screenshot("editor-live-rates-1440");
  },
  SLOW,
);

test(
  "every text on the canvas's nodes is at least 12 px on screen at 1440x900, after the canvas's zoom",
  async () => {
    // The page was reloaded with the saved graph (above), so this is the zoom the canvas opens at.
    const sizes = await canvas()
      .locator(".pipeline-node, .pipeline-node *")
      .evaluateAll((elements) => {
        const viewport = document.querySelector(".pipeline-canvas .react-flow__viewport")!;
        const scale = new DOMMatrix(getComputedStyle(viewport).transform).a;
        const withText = elements.filter((e) => [...e.childNodes].some((n) => n.nodeType === Node.TEXT_NODE && n.textContent!.trim() !== ""));
        return withText.map((e) => ({ text: e.textContent!.trim(), px: Number.parseFloat(getComputedStyle(e).fontSize) * scale }));
      });
    expect(sizes.length).toBeGreaterThan(5);
    expect(sizes.filter((s) => s.px < 12)).toEqual([]);
  },
  SLOW,
);

test(
  "at a phone's width the settings stack under the canvas, and nothing scrolls sideways",
  async () => {
    const { page } = browser;
    await canvasNode("drop-health-check-logs").click();
    await panel("drop-health-check-logs").waitFor();
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBe(0);
    await browser.screenshot("editor-panel-390");
    await page.setViewportSize({ width: 1440, height: 900 });
    browser.assertClean();
  },
  SLOW,
);
