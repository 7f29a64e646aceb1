/**
 * /v1/metrics end to end: the real OTLP/HTTP protobuf exporter pushes counters
 * named like a collector's internal metrics with a per-collector token; the
 * throughput API turns two pushes into rates. Point timestamps are set to
 * known values, so the rates are exact.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { gzipSync } from "node:zlib";
import { parse } from "yaml";
import { create, fromBinary, fromJson, toBinary } from "@bufbuild/protobuf";
import { ExportResultCode, type ExportResult } from "@opentelemetry/core";
import { OTLPMetricExporter } from "@opentelemetry/exporter-metrics-otlp-proto";
import { MeterProvider, MetricReader, type ResourceMetrics } from "@opentelemetry/sdk-metrics";
import {
  ExportMetricsServiceRequestSchema,
  ExportMetricsServiceResponseSchema,
} from "../../server/gen/opentelemetry/proto/collector/metrics/v1/metrics_service_pb.ts";
import { startTestServer, tokenWithScopes, type TestServer } from "../harness.ts";
import { at, cumulativeSum, metricsRequest } from "./points.ts";
import type { ThroughputHistory } from "../../shared/throughput.ts";

class ManualReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.stop();
});

async function newCollector(name: string, tags: Record<string, string> = {}): Promise<{ id: string; token: string }> {
  const res = await server.api("/collectors", { method: "POST", json: { name, tags } });
  const { id } = (await res.json()) as { id: string };
  return { id, token: await otlpToken(id) };
}

async function otlpToken(id: string): Promise<string> {
  const res = await server.api(`/collectors/${id}/otlp-token`, { method: "POST" });
  expect(res.status).toBe(201);
  return ((await res.json()) as { token: string }).token;
}

function exportWith(exporter: OTLPMetricExporter, rm: ResourceMetrics): Promise<ExportResult> {
  return new Promise((resolve) => exporter.export(rm, resolve));
}

interface Throughput {
  window: number;
  lastReportAt: string | null;
  components: { id: string; kind: string; signal: string; in: number | null; out: number | null; errors: number | null }[];
  routes: unknown[];
  pipelines: unknown[];
  process: { cpu: number | null; memoryRss: number | null; uptime: number | null };
}

async function history(id: string): Promise<ThroughputHistory> {
  const res = await server.api(`/collectors/${id}/throughput/history`);
  expect(res.status).toBe(200);
  return (await res.json()) as ThroughputHistory;
}

async function throughput(id: string): Promise<Throughput> {
  const res = await server.api(`/collectors/${id}/throughput`);
  expect(res.status).toBe(200);
  return (await res.json()) as Throughput;
}

function metricsPost(token: string | null, body: Bun.BodyInit, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${server.base}/v1/metrics`, {
    method: "POST",
    headers: { "Content-Type": "application/x-protobuf", ...(token === null ? {} : { Authorization: `Bearer ${token}` }), ...headers },
    body,
  });
}

describe("/v1/metrics with the OTLP protobuf exporter", () => {
  test("two pushes become per-component rates and process figures", async () => {
    const { id, token } = await newCollector("metrics-sdk");
    const empty = await throughput(id);
    expect(empty).toEqual({ window: 0, lastReportAt: null, components: [], routes: [], pipelines: [], process: { cpu: null, memoryRss: null, uptime: null } });
    expect(await history(id)).toEqual({ step: 15, times: [], signals: [], process: { cpu: [], memoryRss: [] } });

    const reader = new ManualReader();
    const provider = new MeterProvider({ readers: [reader] });
    const meter = provider.getMeter("otelcol");
    const accepted = meter.createCounter("otelcol_receiver_accepted_log_records");
    const refused = meter.createCounter("otelcol_receiver_refused_log_records");
    const incoming = meter.createCounter("otelcol_processor_incoming_items");
    const outgoing = meter.createCounter("otelcol_processor_outgoing_items");
    const sent = meter.createCounter("otelcol.exporter.sent_log_records"); // the dotted spelling of newer collectors
    const failed = meter.createCounter("otelcol_exporter_send_failed_log_records_total");
    const cpu = meter.createCounter("otelcol_process_cpu_seconds");
    const rss = meter.createGauge("otelcol_process_memory_rss");
    const uptime = meter.createCounter("otelcol_process_uptime");
    const recv = { receiver: "otlp/app", transport: "http" };
    const proc = { processor: "filter/logs_app_drop", "otel.signal": "logs" };
    const exp = { exporter: "otlphttp/loki" };
    const push = (n: number) => {
      accepted.add(1000 * n, recv);
      refused.add(10 * n, recv);
      incoming.add(1000 * n, proc);
      outgoing.add(600 * n, proc);
      sent.add(600 * n, exp);
      failed.add(5 * n, exp);
      cpu.add(2 * n);
    };

    const exporter = new OTLPMetricExporter({ url: `${server.base}/v1/metrics`, headers: { Authorization: `Bearer ${token}` } });
    push(1);
    rss.record(50_000_000);
    uptime.add(100);
    expect((await exportWith(exporter, at((await reader.collect()).resourceMetrics, 1000))).code).toBe(ExportResultCode.SUCCESS);
    push(10); // over 20 s: 10,000 accepted → 500/s
    rss.record(60_000_000);
    uptime.add(20);
    const sentAt = Date.now();
    expect((await exportWith(exporter, at((await reader.collect()).resourceMetrics, 1020))).code).toBe(ExportResultCode.SUCCESS);
    await exporter.shutdown();
    await provider.shutdown();

    const t = await throughput(id);
    expect(t.window).toBe(20);
    // On the server's clock, when the second push arrived (its points say 1970).
    expect(Date.parse(t.lastReportAt!)).toBeGreaterThanOrEqual(sentAt - (sentAt % 1000));
    expect(Date.parse(t.lastReportAt!)).toBeLessThanOrEqual(Date.now());
    expect(t.components).toEqual([
      { id: "otlp/app", kind: "receiver", signal: "logs", in: 505, out: 500, errors: 5 },
      { id: "filter/logs_app_drop", kind: "processor", signal: "logs", in: 500, out: 300, errors: null },
      { id: "otlphttp/loki", kind: "exporter", signal: "logs", in: 302.5, out: 300, errors: 2.5 },
    ]);
    expect(t.process).toEqual({ cpu: 1, memoryRss: 60_000_000, uptime: 120 });
    expect(t.routes).toEqual([]); // nothing published to this collector

    // The history is on the server's clock: the second push's 20 s end at its arrival, so the last bucket answered has some of them.
    const h = await history(id);
    expect(h.times).toHaveLength(240);
    // The last 15 s bucket is the one holding that arrival or a later one, never the points' own 1970 time.
    expect(h.times.at(-1)! * 1000).toBeGreaterThan(sentAt - 15_000);
    expect(h.times.at(-1)! * 1000).toBeLessThanOrEqual(Date.now());
    expect(h.signals.map((s) => s.signal)).toEqual(["logs"]);
    expect(h.signals[0]!.in.at(-1)).toBeGreaterThan(0);
    expect(h.signals[0]!.in.at(-1)).toBeLessThanOrEqual(505 * (20 / 15) + 1e-3);
    expect(h.process.memoryRss.at(-1)).toBe(60_000_000);
  });

  test("a published route's rates come from its own flow's processors: a filter lowers out, not in", async () => {
    const { id, token } = await newCollector("metrics-routes");
    const call = <T>(path: string, method?: string, json?: unknown) => server.call<T>(path, method, json);
    const source = await call<{ id: string }>("/sources", "POST", { name: "web logs", type: "filelog", config: { include: ["/var/log/web/*.log"] } });
    const destination = await call<{ id: string }>("/destinations", "POST", {
      name: "sink",
      type: "otlphttp",
      config: { endpoint: "https://otlp.example.com" },
    });
    const pipeline = await call<{ id: string }>("/pipelines", "POST", {
      name: "drop health",
      signal: "logs",
      topology: {
        nodes: [
          { id: "in", kind: "source" },
          { id: "drop", kind: "processor", processor: { type: "filter", config: { logs: { log_record: ['IsMatch(body, "GET /health")'] } } } },
          { id: "out", kind: "destination", ref: destination.id },
        ],
        edges: [
          { id: "e1", source: "in", target: "drop" },
          { id: "e2", source: "drop", target: "out" },
        ],
      },
    });
    await call(`/collectors/${id}/sources`, "POST", { sourceId: source.id, configOverrides: {} });
    await call(`/collectors/${id}/destinations`, "POST", { destinationId: destination.id, configOverrides: {} });
    const route = await call<{ id: string }>("/routes", "POST", { collectorId: id, sourceId: source.id, pipelineId: pipeline.id });
    await call("/commit", "POST", { message: "web logs" });
    await call(`/publish/${id}`, "POST");

    // The processor id the collector reports is the one the published config names.
    const target = await server.app.delivery.target(id);
    const rendered = parse(target!.rendered.body) as { processors: Record<string, unknown> };
    const filterId = Object.keys(rendered.processors).find((name) => name.startsWith("filter/"))!;
    expect(filterId).toBeDefined();

    const reader = new ManualReader();
    const provider = new MeterProvider({ readers: [reader] });
    const meter = provider.getMeter("otelcol");
    const incoming = meter.createCounter("otelcol_processor_incoming_items");
    const outgoing = meter.createCounter("otelcol_processor_outgoing_items");
    const exporter = new OTLPMetricExporter({ url: `${server.base}/v1/metrics`, headers: { Authorization: `Bearer ${token}` } });
    const attrs = { processor: filterId, "otel.signal": "logs" };
    incoming.add(100, attrs);
    outgoing.add(90, attrs);
    expect((await exportWith(exporter, at((await reader.collect()).resourceMetrics, 1000))).code).toBe(ExportResultCode.SUCCESS);
    incoming.add(1000, attrs); // 1,000 in, 250 health checks dropped, over 10 s
    outgoing.add(750, attrs);
    expect((await exportWith(exporter, at((await reader.collect()).resourceMetrics, 1010))).code).toBe(ExportResultCode.SUCCESS);
    await exporter.shutdown();
    await provider.shutdown();

    const t = await throughput(id);
    expect(t.routes).toEqual([{ routeId: route.id, in: 100, out: 75 }]);
    expect(t.pipelines).toEqual([{ pipelineId: pipeline.id, sourceId: source.id, via: "route", routeId: route.id, in: 100, out: 75 }]);
  });

  test("a pipeline the collector matches has its flow's rates beside the route's", async () => {
    const { id, token } = await newCollector("metrics-matched", { team: "thru-matched" });
    const call = <T>(path: string, method?: string, json?: unknown) => server.call<T>(path, method, json);
    const routedSource = await call<{ id: string }>("/sources", "POST", { name: "app", type: "filelog", config: { include: ["/var/log/app/*.log"] } });
    const fleetSource = await call<{ id: string }>("/sources", "POST", { name: "sys", type: "filelog", config: { include: ["/var/log/syslog"] } });
    const destination = await call<{ id: string }>("/destinations", "POST", {
      name: "sink2",
      type: "otlphttp",
      config: { endpoint: "https://otlp.example.com" },
    });
    const topology = (sourceRef?: string) => ({
      nodes: [
        { id: "in", kind: "source", ...(sourceRef ? { ref: sourceRef } : {}) },
        { id: "drop", kind: "processor", processor: { type: "filter", config: { logs: { log_record: ['IsMatch(body, "GET /health")'] } } } },
        { id: "out", kind: "destination", ref: destination.id },
      ],
      edges: [
        { id: "e1", source: "in", target: "drop" },
        { id: "e2", source: "drop", target: "out" },
      ],
    });
    const routed = await call<{ id: string }>("/pipelines", "POST", { name: "routed", signal: "logs", topology: topology() });
    const fleet = await call<{ id: string }>("/pipelines", "POST", {
      name: "fleet",
      signal: "logs",
      topology: topology(fleetSource.id),
      matchers: ["team=thru-matched"],
    });
    await call(`/collectors/${id}/sources`, "POST", { sourceId: routedSource.id, configOverrides: {} });
    await call(`/collectors/${id}/destinations`, "POST", { destinationId: destination.id, configOverrides: {} });
    const route = await call<{ id: string }>("/routes", "POST", { collectorId: id, sourceId: routedSource.id, pipelineId: routed.id });
    await call("/commit", "POST", { message: "routed and matched" });
    await call(`/publish/${id}`, "POST");

    const target = await server.app.delivery.target(id);
    const processors = Object.keys((parse(target!.rendered.body) as { processors: Record<string, unknown> }).processors);
    const routedFilter = processors.find((name) => name.startsWith("filter/routed_"))!;
    const fleetFilter = processors.find((name) => name.startsWith("filter/fleet_"))!;
    expect([routedFilter, fleetFilter]).toEqual([expect.any(String), expect.any(String)]);

    const reader = new ManualReader();
    const provider = new MeterProvider({ readers: [reader] });
    const meter = provider.getMeter("otelcol");
    const incoming = meter.createCounter("otelcol_processor_incoming_items");
    const outgoing = meter.createCounter("otelcol_processor_outgoing_items");
    const exporter = new OTLPMetricExporter({ url: `${server.base}/v1/metrics`, headers: { Authorization: `Bearer ${token}` } });
    const add = (filter: string, i: number, o: number) => {
      incoming.add(i, { processor: filter, "otel.signal": "logs" });
      outgoing.add(o, { processor: filter, "otel.signal": "logs" });
    };
    add(routedFilter, 0, 0);
    add(fleetFilter, 0, 0);
    expect((await exportWith(exporter, at((await reader.collect()).resourceMetrics, 2000))).code).toBe(ExportResultCode.SUCCESS);
    add(routedFilter, 200, 100); // over 10 s
    add(fleetFilter, 500, 400);
    expect((await exportWith(exporter, at((await reader.collect()).resourceMetrics, 2010))).code).toBe(ExportResultCode.SUCCESS);
    await exporter.shutdown();
    await provider.shutdown();

    const t = await throughput(id);
    expect(t.routes).toEqual([{ routeId: route.id, in: 20, out: 10 }]);
    const expected = [
      { pipelineId: routed.id, sourceId: routedSource.id, via: "route", routeId: route.id, in: 20, out: 10 },
      { pipelineId: fleet.id, sourceId: fleetSource.id, via: "matchers", in: 50, out: 40 },
    ];
    expect(t.pipelines).toEqual(expected.sort((a, b) => (a.pipelineId < b.pipelineId ? -1 : 1)));
  });

  test("gzip from the exporter, and OTLP JSON with fetch", async () => {
    const { id, token } = await newCollector("metrics-gzip");
    const reader = new ManualReader();
    const provider = new MeterProvider({ readers: [reader] });
    const spans = provider.getMeter("otelcol").createCounter("otelcol_receiver_accepted_spans");
    const exporter = new OTLPMetricExporter({
      url: `${server.base}/v1/metrics`,
      headers: { Authorization: `Bearer ${token}` },
      compression: "gzip" as never,
    });
    spans.add(0, { receiver: "otlp/apm", transport: "grpc" });
    expect((await exportWith(exporter, at((await reader.collect()).resourceMetrics, 500))).code).toBe(ExportResultCode.SUCCESS);
    spans.add(300, { receiver: "otlp/apm", transport: "grpc" });
    expect((await exportWith(exporter, at((await reader.collect()).resourceMetrics, 510))).code).toBe(ExportResultCode.SUCCESS);
    await exporter.shutdown();
    await provider.shutdown();

    const attrs = { exporter: "otlp/gateway" };
    for (const [value, seconds] of [
      [0, 700],
      [400, 710],
    ] as const) {
      const res = await metricsPost(token, JSON.stringify(metricsRequest([cumulativeSum("otelcol_exporter_sent_spans", value, seconds, attrs)])), {
        "Content-Type": "application/json",
      });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("application/json");
      expect(await res.json()).toEqual({});
    }
    const gz = gzipSync(JSON.stringify(metricsRequest([cumulativeSum("otelcol_exporter_sent_spans", 800, 720, attrs)])));
    const res = await metricsPost(token, gz, { "Content-Type": "application/json", "Content-Encoding": "gzip" });
    expect(res.status).toBe(200);

    const t = await throughput(id);
    expect(t.components).toEqual([
      { id: "otlp/apm", kind: "receiver", signal: "traces", in: 30, out: 30, errors: null },
      { id: "otlp/gateway", kind: "exporter", signal: "traces", in: 40, out: 40, errors: null },
    ]);
  });

  test("rejected points come back as partial_success in the request's encoding", async () => {
    const { token } = await newCollector("metrics-partial");
    const bad = metricsRequest([cumulativeSum("otelcol_receiver_accepted_spans", 1, 10, { receiver: "otlp/x" })]);
    const point = bad.resourceMetrics[0]!.scopeMetrics[0]!.metrics[0]!.sum.dataPoints[0]!;
    (point as Record<string, unknown>).asDouble = "NaN";
    const asJson = await metricsPost(token, JSON.stringify(bad), { "Content-Type": "application/json" });
    expect(asJson.status).toBe(200);
    const body = (await asJson.json()) as { partialSuccess: { rejectedDataPoints: string; errorMessage: string } };
    expect(body.partialSuccess.rejectedDataPoints).toBe("1");
    expect(body.partialSuccess.errorMessage).toContain("non-finite");

    const proto = toBinary(ExportMetricsServiceRequestSchema, fromJson(ExportMetricsServiceRequestSchema, bad as never));
    const asProto = await metricsPost(token, proto);
    expect(asProto.status).toBe(200);
    const decoded = fromBinary(ExportMetricsServiceResponseSchema, new Uint8Array(await asProto.arrayBuffer()));
    expect(decoded.partialSuccess?.rejectedDataPoints).toBe(1n);

    // Metrics the server does not read are accepted and ignored.
    const other = await metricsPost(token, JSON.stringify(metricsRequest([cumulativeSum("http.server.requests", 1, 10)])), {
      "Content-Type": "application/json",
    });
    expect(await other.json()).toEqual({});
  });
});

describe("/v1/metrics refusals", () => {
  const valid = () => toBinary(ExportMetricsServiceRequestSchema, create(ExportMetricsServiceRequestSchema));

  test("401 without a token, with Basic, with an unknown token, and with a rotated one at once", async () => {
    const { id, token } = await newCollector("metrics-auth");
    expect((await metricsPost(token, valid())).status).toBe(200);
    expect((await metricsPost(null, valid())).status).toBe(401);
    expect((await metricsPost(null, valid(), { Authorization: `Basic ${btoa(`x:${token}`)}` })).status).toBe(401);
    expect((await metricsPost("svcct_" + "0".repeat(43), valid())).status).toBe(401);
    expect((await metricsPost(server.adminToken, valid())).status).toBe(401);
    const rotated = await otlpToken(id);
    const old = await metricsPost(token, valid());
    expect(old.status).toBe(401);
    expect(old.headers.get("www-authenticate")).toContain("Bearer");
    expect((await metricsPost(rotated, valid())).status).toBe(200);
    // The collector deleted: its token goes with it.
    expect((await server.api(`/collectors/${id}`, { method: "DELETE" })).status).toBe(204);
    expect((await metricsPost(rotated, valid())).status).toBe(401);
  });

  test("405, 415, 413 and 400", async () => {
    const { token } = await newCollector("metrics-refusals");
    const get = await fetch(`${server.base}/v1/metrics`, { headers: { Authorization: `Bearer ${token}` } });
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toBe("POST");
    expect((await metricsPost(token, "x", { "Content-Type": "text/plain" })).status).toBe(415);
    expect((await metricsPost(token, valid(), { "Content-Encoding": "br" })).status).toBe(415);

    // Over the compressed limit, and a small gzip bomb over the decompressed one.
    expect((await metricsPost(token, new Uint8Array(5 * 1024 * 1024))).status).toBe(413);
    const bomb = gzipSync(new Uint8Array(9 * 1024 * 1024));
    expect(bomb.byteLength).toBeLessThan(64 * 1024);
    expect((await metricsPost(token, bomb, { "Content-Encoding": "gzip" })).status).toBe(413);

    const garbage = await metricsPost(token, new Uint8Array([0xff, 0xff, 0xff, 0xff, 0x0f]));
    expect(garbage.status).toBe(400);
    expect(garbage.headers.get("content-type")).toBe("application/x-protobuf");
    const notJson = await metricsPost(token, "{nope", { "Content-Type": "application/json" });
    expect(notJson.status).toBe(400);
    expect(((await notJson.json()) as { message: string }).message).toContain("ExportMetricsServiceRequest");
    expect((await metricsPost(token, "not gzip", { "Content-Encoding": "gzip" })).status).toBe(400);
  });

  test("the throughput APIs: 404 for an unknown collector, health:read suffices, collectors:read alone does not", async () => {
    const { id } = await newCollector("metrics-scope");
    expect((await server.api("/collectors/0190c3c0-0000-7000-8000-000000000000/throughput")).status).toBe(404);
    const health = await tokenWithScopes(server, ["health:read"]);
    expect((await server.api(`/collectors/${id}/throughput`, { token: health })).status).toBe(200);
    const registry = await tokenWithScopes(server, ["collectors:read"]);
    expect((await server.api(`/collectors/${id}/throughput`, { token: registry })).status).toBe(403);
    expect((await server.api("/collectors/0190c3c0-0000-7000-8000-000000000000/throughput/history")).status).toBe(404);
    expect((await server.api(`/collectors/${id}/throughput/history`, { token: health })).status).toBe(200);
    expect((await server.api(`/collectors/${id}/throughput/history`, { token: registry })).status).toBe(403);
  });

  test("the metrics channel reports up in system health", async () => {
    const res = await server.api("/system/health");
    const body = (await res.json()) as { channels: Record<string, { state: string }> };
    expect(body.channels.metrics).toEqual({ state: "up" });
  });
});
