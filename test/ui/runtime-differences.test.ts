/**
 * The parity warning before publish, in Debian's chromium against a real
 * test server: an Alloy collector running host metrics (node_exporter's
 * names on Alloy, the semantic conventions' on Runtime O) is listed under
 * "Other data on Alloy" in the publish plan with the difference, and the
 * plan's summary counts it; a Runtime O collector running the same is not.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../harness.ts";
import { openBrowser, signIn, type BrowserSession } from "./browser.ts";

let server: TestServer;
let browser: BrowserSession;
const SLOW = 60_000;

beforeAll(async () => {
  server = await startTestServer();
  browser = await openBrowser({ width: 1280, height: 800 });
  const call = <T = { id: string }>(path: string, json: unknown) => server.call<T>(path, "POST", json);
  const host = await call("/sources", { name: "host", type: "hostmetrics", config: {} });
  const backend = await call("/destinations", { name: "backend", type: "otlphttp", config: { endpoint: "https://otlp.example.com" } });
  const graph = {
    nodes: [
      { id: "in", kind: "source" },
      { id: "out", kind: "destination", ref: backend.id },
    ],
    edges: [{ id: "e", source: "in", target: "out" }],
  };
  const pipeline = await call("/pipelines", { name: "host metrics", signal: "metrics", topology: graph });
  for (const [name, managementMode] of [
    ["alloy-host", "rcfg-remotecfg"],
    ["otel-host", "opamp"],
  ] as const) {
    const collector = await call("/collectors", { name, managementMode });
    await call(`/collectors/${collector.id}/sources`, { sourceId: host.id, configOverrides: {} });
    await call(`/collectors/${collector.id}/destinations`, { destinationId: backend.id, configOverrides: {} });
    await call("/routes", { collectorId: collector.id, sourceId: host.id, pipelineId: pipeline.id });
  }
  await call("/commit", { message: "host metrics on both runtimes" });
  await signIn(browser.page, server.base, await server.uiAdmin(), "/ui/changes");
}, SLOW);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

test(
  "the publish plan names the Alloy collector whose host metrics differ, with the difference",
  async () => {
    const { page } = browser;
    await page.getByRole("button", { name: "Review and publish" }).click();
    const plan = page.getByRole("form", { name: "Publish plan" });
    await plan.getByText("2 collectors change in 2 ways, 0 unchanged, 1 source type delivers other data on Alloy.").waitFor();
    const section = plan.getByRole("region", { name: "Other data on Alloy" });
    const items = section.getByRole("listitem");
    expect(await items.count()).toBe(1);
    const text = (await items.first().textContent()) ?? "";
    expect(text).toContain("hostmetrics: host metrics are the hostmetrics receiver's");
    expect(text).toContain("node_cpu_seconds_total");
    expect(await section.getByRole("link", { name: "alloy-host", exact: true }).count()).toBe(1);
    expect(await section.getByRole("link", { name: "otel-host", exact: true }).count()).toBe(0);
    await browser.screenshot("publish-plan-runtime-differences");
  },
  SLOW,
);
