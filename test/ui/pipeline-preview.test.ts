/**
 * The pipeline editor's config preview in Debian's chromium against the real
 * server (issue 34 item 2): the collectors the pipeline applies to are
 * offered first; picking one renders its config as publish would (an old
 * collector, connected over a real OpAMP WebSocket, gets the exporter name
 * its version takes) and says which collector, runtime and version; without
 * a collector it names the version install.sh installs. The text shown is
 * the API's preview for that collector, which test/api/pipeline-preview.test.ts
 * holds byte-identical to what is delivered. No console errors.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { PipelinePreview } from "../../shared/pipelines.ts";
import { startTestServer, type TestServer } from "../harness.ts";
import { description, RawAgent, until } from "../opamp/helpers.ts";
import { openBrowser, signIn, type BrowserSession } from "./browser.ts";

let server: TestServer;
let browser: BrowserSession;
let agent: RawAgent;
let pipelineId = "";
let oldId = "";
const SLOW = 30_000;
const INSTALLED = /^COLLECTOR_VERSION=(\S+)$/m.exec(await Bun.file(`${import.meta.dir}/../../installer/install.sh`).text())![1]!;

const call = <T = Record<string, unknown>>(path: string, method?: string, json?: unknown) => server.call<T>(path, method, json);

beforeAll(async () => {
  server = await startTestServer();
  browser = await openBrowser({ width: 1280, height: 800 });
  const source = await call<{ id: string }>("/sources", "POST", { name: "app logs", type: "filelog", config: { include: ["/var/log/app.log"] } });
  const destination = await call<{ id: string }>("/destinations", "POST", { name: "gateway", type: "otlp", config: { endpoint: "gateway.example.com:4317" } });
  pipelineId = (
    await call<{ id: string }>("/pipelines", "POST", {
      name: "edge",
      signal: "logs",
      matchers: ["team=edge"],
      topology: {
        nodes: [
          { id: "in", kind: "source", ref: source.id },
          { id: "out", kind: "destination", ref: destination.id },
        ],
        edges: [{ id: "e1", source: "in", target: "out" }],
      },
    })
  ).id;
  // "aaa-other" sorts first by name, yet the tagged one is offered first.
  await call("/collectors", "POST", { name: "aaa-other" });
  oldId = (await call<{ id: string }>("/collectors", "POST", { name: "edge-old", tags: { team: "edge" } })).id;
  const token = (await call<{ token: string }>(`/collectors/${oldId}/otlp-token`, "POST")).token;
  agent = await RawAgent.connect(`${server.base.replace(/^http/, "ws")}/v1/opamp`, token);
  await agent.call({ agentDescription: description({ "service.name": "otelcol-contrib", "service.version": "0.120.0" }) });
  await until(
    async () => (await call<{ reported?: Record<string, string> }>(`/collectors/${oldId}`)).reported?.["service.version"] === "0.120.0",
    10_000,
    20,
    "edge-old's reported version",
  );
  const admin = await server.uiAdmin();
  browser.page.setDefaultTimeout(10_000);
  await signIn(browser.page, server.base, admin, `/ui/pipelines/${pipelineId}`);
}, 60_000);

afterAll(async () => {
  agent?.close();
  await browser?.close();
  await server?.stop();
});

test(
  "without a collector the preview names the installed version it assumed",
  async () => {
    const { page } = browser;
    await page
      .getByRole("status", { name: "Rendered for" })
      .getByText(`Rendered for OpenTelemetry Collector (OpAMP) ${INSTALLED} (the version install.sh installs)`)
      .waitFor();
    const region = page.getByRole("region", { name: "Rendered config (OpenTelemetry Collector (OpAMP))" });
    await region.getByText(/otlp_grpc\/gateway:/).waitFor();
  },
  SLOW,
);

test(
  "the collectors the pipeline applies to come first; picking one renders what publish would deliver to it",
  async () => {
    const { page } = browser;
    const picker = page.getByLabel("Render for");
    await picker.locator("optgroup[label='Collectors this pipeline applies to'] option", { hasText: "edge-old" }).waitFor({ state: "attached" });
    const labels = await picker.locator("option").allTextContents();
    expect(labels.indexOf("edge-old")).toBeLessThan(labels.indexOf("aaa-other"));
    await picker.selectOption({ label: "edge-old" });
    const status = page.getByRole("status", { name: "Rendered for" });
    await status.getByText("Rendered for collector edge-old (OpenTelemetry Collector (OpAMP), reporting 0.120.0)").waitFor();
    expect(await status.textContent()).toContain("This pipeline applies to it: its attributes match the pipeline.");
    // The runtime is the collector's: the switch is for the no-collector preview only.
    expect(await page.getByRole("group", { name: "Runtime" }).count()).toBe(0);
    const region = page.getByRole("region", { name: "Rendered config (OpenTelemetry Collector (OpAMP))" });
    await region.getByText(/otlp\/gateway:/).waitFor();
    const topology = await call(`/pipelines/${pipelineId}/topology`);
    const api = await call<PipelinePreview>(`/pipelines/${pipelineId}/topology/preview?collectorId=${oldId}`, "POST", topology);
    expect(await region.textContent()).toBe(api.config);
    await browser.screenshot("pipeline-preview-collector-1280");

    await picker.selectOption({ label: "aaa-other" });
    await status.getByText(/This pipeline does not apply to it/).waitFor();
    browser.assertClean();
  },
  SLOW,
);
