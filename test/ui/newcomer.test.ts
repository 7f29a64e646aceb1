/**
 * The newcomer's path end to end (issue 24's first acceptance point), in
 * Debian's chromium against the server started as `npm start` starts it
 * (`bun server/main.ts --quickstart` in an empty directory): sign in with the
 * first credentials its banner printed; add a collector from the UI (OpAMP,
 * with its bootstrap files) and onboard it with a real OpAMP client holding
 * the token those files carry; create a source and a destination from the
 * catalog forms; build a pipeline on the canvas whose matcher selects the
 * collector by the tag set when adding it; review the plan and publish all
 * at once; the dashboard shows the rollout completed and the collector
 * current. The collector then pushes its own metrics as OTLP (with the
 * collector token the operator mints on its page: the stand-in cannot take
 * the own-metrics offer a supervisor gets); after a reload its page shows the
 * throughput charts filled, the pipeline canvas shows live rates on its
 * nodes, and the dashboard the fleet's rate. Every step is the operator's,
 * in the browser; the path's wall time is logged. No console errors, no 4xx,
 * no error in the server's log.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { parse } from "yaml";
import { applyingClient, type OpAMPClient } from "../opamp/elastic.ts";
import { bannerUiPassword, killAll, removeTempDirs, startServer, tempDir, type ServerProcess } from "../process/spawn.ts";
import { cumulativeSum, pushMetrics } from "../telemetry/points.ts";
import { createLogSourceAndBackend, createLogsPipeline, goTo, openBrowser, type BrowserSession } from "./browser.ts";

let server: ServerProcess;
let browser: BrowserSession;
let client: OpAMPClient | undefined;
/** The configs the client was sent, newest last, as it applied them. */
const applied: string[] = [];
let collectorId = "";
let pipelineId = "";
let started = 0;
const SLOW = 45_000;

beforeAll(async () => {
  started = performance.now();
  server = await startServer({ cwd: tempDir("svc-newcomer-"), args: ["--quickstart"] });
  browser = await openBrowser({ width: 1440, height: 900 });
  browser.page.setDefaultTimeout(15_000);
  // Rotating the collector token asks first; the operator says yes.
  browser.page.on("dialog", (dialog) => void dialog.accept());
}, SLOW);

afterAll(async () => {
  await client?.shutdown();
  await browser?.close();
  await killAll();
  removeTempDirs();
});

/** Moves by the main navigation, as a user would. */
const go = (label: string) => goTo(browser.page, label);

test(
  "the banner's Web UI and first credentials sign the operator in, onto the dashboard",
  async () => {
    const out = server.stdout();
    const ui = /^Web UI: (\S+)$/m.exec(out)![1]!;
    // The banner names the user and the file holding the password, never the password itself.
    const username = /^UI login: (\S+), password in /m.exec(out)![1]!;
    const password = bannerUiPassword(out)!;
    expect(out).not.toContain(password);
    const { page } = browser;
    await page.goto(ui);
    await page.waitForURL((url) => url.pathname === "/ui/login");
    await page.getByLabel("Username").fill(username!);
    await page.getByLabel("Password").fill(password!);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { level: 1, name: "Dashboard" }).waitFor();
    await page.getByRole("heading", { name: "No collectors yet" }).waitFor();
  },
  SLOW,
);

test(
  "a collector is added from the UI and onboarded by a real OpAMP client with the token its bootstrap files hold",
  async () => {
    const { page } = browser;
    await go("Collectors");
    await page.getByRole("button", { name: "Add collector" }).click();
    const form = page.getByRole("form", { name: "Add a collector" });
    await form.getByLabel("Name").fill("web-1");
    await form.getByLabel("Environment").fill("prod");
    await form.getByLabel("Tags").fill("team=web");
    await form.getByRole("radio", { name: /^OpenTelemetry Collector \(OpAMP\)/ }).check();
    await form.getByRole("radio", { name: /bootstrap files/ }).check();
    await form.getByRole("button", { name: "Add collector" }).click();
    const file = page.getByRole("region", { name: "/etc/opampsupervisor/config.yaml" });
    const supervisor = parse((await file.locator("pre").textContent())!) as { server: { endpoint: string; headers: { Authorization: string } } };
    // The quick-start has no externalUrl: collectors are given the URL it serves.
    expect(supervisor.server.endpoint).toBe(`${server.base.replace(/^http/, "ws")}/v1/opamp`);
    expect(supervisor.server.headers.Authorization).toMatch(/^Bearer svcen_/);
    collectorId = decodeURIComponent((await page.getByRole("status").getByRole("link", { name: "web-1" }).getAttribute("href"))!.split("/").at(-1)!);
    await page.getByRole("button", { name: "Done" }).click();

    // The collector's stand-in: Elastic's OpAMP client, over OpAMP's HTTP transport on the same path, with the
    // supervisor file's header. It applies what it is sent and reports APPLIED with the config's hash, as the
    // supervisor does; it has no effective-config, health or own-metrics capabilities (the client supports only
    // these), so it is never offered own-metrics settings: the metrics step below takes the token from the UI.
    client = applyingClient({
      endpoint: supervisor.server.endpoint.replace(/^ws/, "http"),
      authorization: supervisor.server.headers.Authorization,
      heartbeatIntervalSeconds: 0.5,
      identifying: { "service.name": "otelcol-contrib", "host.name": "web-1" },
      nonIdentifying: { "os.type": "linux" },
      onApplied: ({ body }) => applied.push(body),
    });
    const row = page
      .getByRole("table", { name: "Collectors" })
      .getByRole("row")
      .filter({ has: page.getByRole("link", { name: "web-1", exact: true }) });
    await row.getByText("online").waitFor();
    await browser.screenshot("newcomer-collector-online-1440");
  },
  SLOW,
);

test(
  "a source and a destination are created from the catalog forms",
  async () => {
    await createLogSourceAndBackend(browser.page, "app logs");
  },
  SLOW,
);

test(
  "a pipeline is built on the canvas, with a matcher that selects the new collector by its tag",
  async () => {
    const { page } = browser;
    await go("Pipelines");
    pipelineId = await createLogsPipeline(page, "web logs");
    // Added by click: each is placed and wired where it belongs.
    await page.getByRole("button", { name: "Add source app logs" }).click();
    await page.getByRole("button", { name: "Add destination backend" }).click();
    await page.getByRole("group", { name: "Pipeline canvas" }).locator('.react-flow__node[data-id="app-logs"]').click();
    await page.getByRole("button", { name: "Add processor Drop Health Check Logs" }).click();
    const edges = page.getByRole("list", { name: /^Edges/ });
    await edges.getByText("Filter (drop-health-check-logs) → backend (backend)").waitFor();
    await page
      .getByRole("region", { name: /^Problems/ })
      .getByRole("heading", { name: "Problems (0)" })
      .waitFor({ state: "attached" });
    await page.getByRole("button", { name: "Save", exact: true }).click();
    await page.getByRole("status").getByText("Saved", { exact: true }).waitFor();

    const targeting = page.getByRole("region", { name: "Collectors" });
    await targeting.getByRole("textbox", { name: "Matcher 1" }).fill("team=web");
    await targeting.getByText("1 collector matches.").waitFor();
    expect(await targeting.getByRole("list", { name: "Matching collectors" }).getByRole("link").allTextContents()).toEqual(["web-1"]);
    await targeting.getByRole("button", { name: "Save matchers" }).click();
    await targeting.getByText(/^Saved: pending until committed/).waitFor();
    await browser.screenshot("newcomer-pipeline-1440");
  },
  SLOW,
);

test(
  "committed, planned and published all at once: the collector applies it and the dashboard shows it current",
  async () => {
    const { page } = browser;
    await go("Changes");
    const form = page.getByRole("form", { name: "Commit pending changes" });
    await form.getByLabel("Commit message").fill("Ship web logs");
    await form.getByRole("button", { name: "Commit" }).click();
    await page.getByText("No pending changes.").waitFor();
    await page.getByRole("button", { name: "Review and publish" }).click();
    const plan = page.getByRole("form", { name: "Publish plan" });
    const change = plan.getByRole("list", { name: "Changes" }).getByRole("listitem");
    await change.getByRole("link", { name: "web-1" }).waitFor();
    expect(await change.count()).toBe(1);
    await plan.getByLabel("All at once").check();
    await browser.screenshot("newcomer-plan-1440");
    await plan.getByRole("button", { name: "Confirm and publish" }).click();
    await page.getByRole("region", { name: "Rollout progress" }).getByText("Completed", { exact: true }).waitFor();
    expect(applied).toHaveLength(1);
    expect(applied[0]).toContain("/var/log/app/*.log");
    expect(applied[0]).toContain("https://otlp.example.com:4318");

    await go("Dashboard");
    const rollout = page.getByRole("region", { name: "Latest rollout", exact: true });
    await rollout.getByText("completed", { exact: true }).waitFor();
    await rollout.getByRole("link", { name: "1 current" }).waitFor();
    await rollout.getByText("1 of 1 current").waitFor();
    await page.getByRole("region", { name: "Collectors", exact: true }).getByRole("link", { name: "1 online" }).waitFor();
    await browser.screenshot("newcomer-dashboard-1440");
  },
  SLOW,
);

/**
 * The collector's own counters for every component of the logs pipelines in
 * the config it applied (named as it names them), at `seconds` on its clock:
 * `total` records through each (and 1 % of them failed to send), and its
 * process' CPU and memory.
 */
function ownMetrics(body: string, seconds: number, total: number) {
  const config = parse(body) as { service: { pipelines: Record<string, { receivers?: string[]; processors?: string[]; exporters?: string[] }> } };
  const logs = Object.entries(config.service.pipelines).filter(([name]) => name.startsWith("logs"));
  const each = (key: "receivers" | "processors" | "exporters") => [...new Set(logs.flatMap(([, p]) => p[key] ?? []))];
  expect(each("receivers").length).toBeGreaterThan(0);
  return [
    ...each("receivers").map((receiver) => cumulativeSum("otelcol_receiver_accepted_log_records", total, seconds, { receiver })),
    ...each("processors").flatMap((processor) => [
      cumulativeSum("otelcol_processor_incoming_items", total, seconds, { processor, "otel.signal": "logs" }),
      cumulativeSum("otelcol_processor_outgoing_items", total, seconds, { processor, "otel.signal": "logs" }),
    ]),
    ...each("exporters").flatMap((exporter) => [
      cumulativeSum("otelcol_exporter_sent_log_records", total * 0.99, seconds, { exporter }),
      cumulativeSum("otelcol_exporter_send_failed_log_records", total / 100, seconds, { exporter }),
    ]),
    cumulativeSum("otelcol_process_cpu_seconds", seconds / 100, seconds),
    { name: "otelcol_process_memory_rss", gauge: { dataPoints: [{ timeUnixNano: String(BigInt(seconds) * 1_000_000_000n), asDouble: 90 * 2 ** 20 }] } },
  ];
}

/** The number a chart's legend gives for `series` (`"logs in 100/s"` → 100; MiB as such). */
async function legendValue(chart: string, series: string): Promise<number> {
  const item = browser.page.getByRole("figure", { name: chart }).getByRole("listitem").filter({ hasText: series });
  const text = (await item.locator(".chart-value").textContent())!;
  const value = /^([\d.]+)/.exec(text);
  if (value === null) throw new Error(`${chart}: ${series} reads "${text}", not a number`);
  return Number(value[1]);
}

test(
  "after the collector pushes its own metrics, its page opens with the throughput charts filled",
  async () => {
    const { page } = browser;
    await page.getByRole("region", { name: "Collectors", exact: true }).getByRole("link", { name: "1 online" }).click();
    await page.getByRole("link", { name: "web-1", exact: true }).click();
    await page.waitForURL((url) => url.pathname === `/ui/collectors/${collectorId}`);
    // The token a supervisor is offered for its own metrics; the stand-in cannot take offers, so the operator mints it here.
    await page.getByRole("button", { name: "Rotate token" }).click();
    const token = await page.getByLabel("New collector token").inputValue();
    expect(token).toMatch(/^svcct_/);

    // Two exports 300 s apart on the collector's clock, the second now: 100 records/s through each component.
    const now = Math.floor(Date.now() / 1000);
    for (const [seconds, total] of [
      [now - 300, 0],
      [now, 30_000],
    ] as const) {
      const res = await pushMetrics(server.base, token, ownMetrics(applied.at(-1)!, seconds, total));
      expect(res.status).toBe(200);
    }
    await page.reload();
    const records = page.getByRole("figure", { name: "Records per second in and out" });
    await records.waitFor();
    expect(await records.locator("canvas").count()).toBeGreaterThan(0);
    // Each legend gives its newest measured bucket: the full rate, or less when the bucket the export arrived in closed before the page read the history.
    expect(await legendValue("Records per second in and out", "logs in")).toBeWithin(1, 100.01);
    expect(await legendValue("Records per second in and out", "logs out")).toBeWithin(1, 99.01);
    expect(await legendValue("Errors per second", "logs")).toBeWithin(0.01, 1.001);
    expect(await legendValue("CPU", "CPU")).toBeGreaterThan(0);
    expect(await legendValue("Memory", "Memory (RSS)")).toBeGreaterThan(0);
    await page
      .getByRole("region", { name: "Topology" })
      .getByRole("listitem", { name: /web logs/ })
      .waitFor();
    await browser.screenshot("newcomer-throughput-1440");
  },
  SLOW,
);

test(
  "the pipeline canvas shows live rates on its nodes",
  async () => {
    const { page } = browser;
    await page.goto(`${server.base}/ui/pipelines/${encodeURIComponent(pipelineId)}`);
    await page.getByText("Summed over 1 of 1 collector.").waitFor();
    const rates = (id: string) => page.getByRole("group", { name: "Pipeline canvas" }).locator(`.react-flow__node[data-id="${id}"] .pipeline-node-rates`);
    await rates("app-logs")
      .filter({ hasText: /^in 100\/s · out 100\/s$/ })
      .waitFor();
    await rates("drop-health-check-logs")
      .filter({ hasText: /^in 100\/s · out 100\/s$/ })
      .waitFor();
    // The destination by its exporter: what it sent, and its send failures.
    await rates("backend")
      .filter({ hasText: /^in 100\/s · out 99\/s · (⚠ )?errors 1\/s$/ })
      .waitFor();
    await browser.screenshot("newcomer-live-rates-1440");
    // Back on the dashboard, the fleet's rate and its top collector.
    await go("Dashboard");
    await page.getByRole("region", { name: "Top collectors by records/s" }).getByRole("link", { name: "web-1" }).waitFor();
    const fleet = page.getByRole("region", { name: "Fleet records/s" });
    expect(await fleet.textContent()).toContain("from 1 collector; 1 reporting now");
    await fleet.getByRole("figure", { name: "Fleet records per second" }).locator("canvas").first().waitFor();
    await browser.screenshot("newcomer-dashboard-rates-1440");
    const seconds = (performance.now() - started) / 1000;
    console.log(`newcomer path (server start to rates on the canvas and dashboard): ${seconds.toFixed(1)} s wall time`);
  },
  SLOW,
);

test("no console or page errors on the whole path", async () => {
  browser.assertClean();
  // The path met no refusal either (Chromium logs each 4xx as a console error).
  expect(browser.httpErrors).toEqual([]);
  // Nor did the server log an error of its own (pino's JSON lines, level 50 and up).
  const logged = server
    .stdout()
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as { level: number; msg: string });
  expect(logged.filter((entry) => entry.level >= 50)).toEqual([]);
  expect(server.stderr()).toBe("");
});
