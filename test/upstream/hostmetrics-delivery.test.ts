/**
 * Runtime O's side of the hostmetrics row of the parity table, from the real
 * collector: the hostmetrics receiver as svc renders it delivers
 * semantic-convention names (system.cpu.time with attributes cpu and state),
 * not node_exporter's, so the difference svc shows for Alloy collectors
 * (catalog/sources/hostmetrics/hostmetrics.ts delivery) is a real one.
 */
import { afterAll, expect, test } from "bun:test";
import { join } from "node:path";
import { hostmetricsSource } from "../../server/catalog/sources/hostmetrics/hostmetrics.ts";
import { peer } from "../peers/peers.ts";
import { tempDir } from "../process/spawn.ts";
import { until } from "../opamp/helpers.ts";

type Metric = { name: string; unit?: string; sum?: { dataPoints: { attributes: { key: string }[] }[] } };
const names = new Set<string>();
const cpu: Metric[] = [];
const sink = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(req) {
    if (new URL(req.url).pathname === "/v1/metrics") {
      const body = (await req.json()) as { resourceMetrics: { scopeMetrics: { metrics: Metric[] }[] }[] };
      for (const m of body.resourceMetrics.flatMap((r) => r.scopeMetrics.flatMap((s) => s.metrics))) {
        names.add(m.name);
        if (m.name === "system.cpu.time") cpu.push(m);
      }
    }
    return new Response("{}", { headers: { "Content-Type": "application/json" } });
  },
});
let collector: ReturnType<typeof Bun.spawn> | null = null;
afterAll(() => {
  collector?.kill();
  sink.stop(true);
});

test("the real collector's hostmetrics receiver names CPU time system.cpu.time with cpu and state, and nothing node_*", async () => {
  const receiver = hostmetricsSource.otelcol({ collection_interval: "1s", scrapers: ["cpu", "memory"] });
  const dir = tempDir("svc-hostmetrics-");
  const path = join(dir, "config.json");
  await Bun.write(
    path,
    JSON.stringify({
      receivers: { [receiver.type]: receiver.config },
      exporters: { otlphttp: { endpoint: `http://127.0.0.1:${sink.port}`, encoding: "json", compression: "none" } },
      service: { telemetry: { metrics: { level: "none" } }, pipelines: { metrics: { receivers: [receiver.type], exporters: ["otlphttp"] } } },
    }),
  );
  collector = Bun.spawn([peer("otelcol"), `--config=file:${path}`], { stdout: "ignore", stderr: Bun.file(join(dir, "log")) });
  const metric = await until(async () => cpu[0], 60_000, 100, "system.cpu.time at the OTLP/HTTP sink");
  expect(metric.unit).toBe("s");
  const keys = new Set(metric.sum!.dataPoints.flatMap((p) => p.attributes.map((a) => a.key)));
  expect([...keys].sort()).toEqual(["cpu", "state"]);
  expect(names.has("system.memory.usage")).toBe(true);
  expect([...names].filter((n) => n.startsWith("node_"))).toEqual([]);
}, 120_000);
