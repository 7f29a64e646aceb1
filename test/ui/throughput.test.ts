/**
 * The collector page's throughput in Debian's chromium against the real
 * server: the charts open filled from the server's history (also after a
 * reload), the topology shows each flow's nodes with live rates, and a node
 * whose errors rise is marked; node text reads at 12 px or more. Screenshots
 * at 1440×900 and 390×844, no console errors.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { deploymentKit } from "../deployment.ts";
import { startTestServer, type TestServer } from "../harness.ts";
import { openBrowser, signIn, type BrowserSession } from "./browser.ts";
import { cumulativeSum, pushMetrics } from "../telemetry/points.ts";

let server: TestServer;
let browser: BrowserSession;
let collectorId: string;
let token: string;
/** When the pushes began, on this machine's (and the server's) clock. */
let pushedAt: number;
const SLOW = 30_000;

const call = <T = Record<string, unknown>>(path: string, method?: string, json?: unknown) => server.call<T>(path, method, json);

/** A collector's own cumulative counters at `seconds`, named as the renderer names the deployment kit's components. */
async function push(seconds: number, accepted: number, failed: number) {
  const processor = { "otelcol.component.id": "batch/logs_app_logs_batch", "otelcol.pipeline.id": "logs/logs_app_logs" };
  const res = await pushMetrics(server.base, token, [
    cumulativeSum("otelcol_receiver_accepted_log_records", accepted, seconds, { receiver: "filelog/app_logs" }),
    cumulativeSum("otelcol_processor_incoming_items", accepted, seconds, processor),
    cumulativeSum("otelcol_processor_outgoing_items", accepted, seconds, processor),
    cumulativeSum("otelcol_exporter_sent_log_records", accepted - failed, seconds, { exporter: "otlphttp/backend" }),
    cumulativeSum("otelcol_exporter_send_failed_log_records", failed, seconds, { exporter: "otlphttp/backend" }),
    cumulativeSum("otelcol_process_cpu_seconds", seconds / 10, seconds),
    { name: "otelcol_process_memory_rss", gauge: { dataPoints: [{ timeUnixNano: String(BigInt(seconds) * 1_000_000_000n), asDouble: 80 * 2 ** 20 }] } },
  ]);
  expect(res.status).toBe(200);
}

beforeAll(async () => {
  server = await startTestServer();
  browser = await openBrowser({ width: 1440, height: 900 });
  collectorId = (await call<{ id: string }>("/collectors", "POST", { name: "edge-1" })).id;
  await (await deploymentKit(call))(collectorId);
  await call("/commit", "POST", { message: "one" });
  await call(`/publish/${collectorId}`, "POST");
  token = (await call<{ token: string }>(`/collectors/${collectorId}/otlp-token`, "POST")).token;
  // A point's interval ends at its arrival on the server's clock: these 600 s at 100/s fill 40 buckets of the history.
  pushedAt = Date.now();
  await push(1000, 0, 0);
  await push(1600, 60_000, 0);
  await signIn(browser.page, server.base, await server.uiAdmin(), `/ui/collectors/${collectorId}`);
}, SLOW);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

test("the history answers epoch-second bucket ends, with gaps where nothing was measured", async () => {
  const history = await call<{ step: number; times: number[]; signals: { signal: string; in: (number | null)[] }[] }>(
    `/collectors/${collectorId}/throughput/history`,
  );
  expect(history.step).toBe(15);
  // Buckets on the server's clock since the pushes (whose points say 1970): the last is the current 15 s.
  expect(history.times.at(-1)! * 1000).toBeGreaterThan(pushedAt - 15_000);
  expect(history.times.at(-1)! * 1000).toBeLessThanOrEqual(Date.now());
  const logsIn = history.signals.find((s) => s.signal === "logs")!.in;
  expect(logsIn.some((v) => v === null)).toBe(true);
  expect(logsIn.filter((v) => v !== null && v > 0).length).toBeGreaterThan(30);
});

test(
  "the charts open filled from the history, also after a reload",
  async () => {
    const { page } = browser;
    for (const round of [1, 2]) {
      if (round === 2) await page.reload();
      const records = page.getByRole("figure", { name: "Records per second in and out" });
      await records.waitFor();
      expect(await records.locator("canvas").count()).toBeGreaterThan(0);
      const legend = await records.getByRole("list").textContent();
      expect(legend).toMatch(/logs in 100\/s/);
      expect(legend).toMatch(/logs out [\d.]+\/s/);
      await page.getByRole("figure", { name: "Errors per second" }).waitFor();
      expect(await page.getByRole("figure", { name: "CPU" }).getByRole("list").textContent()).toMatch(/CPU [\d.]+ %/);
      await page.getByRole("figure", { name: "Memory" }).waitFor();
    }
    // The live tables stay.
    const row = page.getByRole("region", { name: "Components" }).getByRole("row", { name: /otlphttp\/backend/ });
    expect(await row.getByRole("cell").allTextContents()).toEqual(["exporter", "logs", "100/s", "100/s", "0.00/s"]);
  },
  SLOW,
);

test(
  "the topology shows each flow's nodes with live rates",
  async () => {
    const topology = browser.page.getByRole("region", { name: "Topology" });
    const flow = topology.getByRole("listitem", { name: "app logs → logs" });
    await flow.waitFor();
    expect(await flow.locator(".topology-flow-head").textContent()).toContain("via route");
    const nodes = await flow.locator(".topology-node").allTextContents();
    expect(nodes).toHaveLength(3);
    expect(nodes[0]).toContain("app logs");
    expect(nodes[0]).toContain("100/s");
    expect(nodes[1]).toContain("batch");
    expect(nodes[1]).toContain("100/s → 100/s");
    expect(nodes[2]).toContain("backend");
    expect(await topology.locator(".topology-alert").count()).toBe(0);
  },
  SLOW,
);

test(
  "a node whose errors rise is marked; node text reads at 12 px or more; screenshots at desktop and phone widths",
  async () => {
    const { page } = browser;
    await push(1610, 61_000, 100);
    const marked = page.getByRole("region", { name: "Topology" }).locator(".topology-alert");
    await marked.waitFor({ timeout: 15_000 });
    expect(await marked.count()).toBe(1);
    expect(await marked.textContent()).toContain("backend");
    expect(await marked.textContent()).toContain("errors rising");
    // Every text in the topology's nodes, the alert's mark included, reads at 12 px or more at 1440 px.
    const sizes = await page
      .getByRole("region", { name: "Topology" })
      .locator(".topology-node, .topology-node *")
      .evaluateAll((elements) =>
        elements
          .filter((e) => [...e.childNodes].some((n) => n.nodeType === Node.TEXT_NODE && n.textContent!.trim() !== ""))
          .map((e) => ({ text: e.textContent!.trim(), px: Number.parseFloat(getComputedStyle(e).fontSize) })),
      );
    expect(sizes.length).toBeGreaterThan(3);
    expect(sizes.filter((s) => s.px < 12)).toEqual([]);
    await page.getByRole("region", { name: "Topology" }).scrollIntoViewIfNeeded();
    await browser.screenshot("throughput-1440");
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBe(0);
    await browser.screenshot("throughput-390");
    browser.assertClean();
  },
  SLOW,
);
