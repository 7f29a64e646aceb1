/**
 * The last hour in 15 s buckets, on an injected server clock: the window's
 * own API for exact figures, and the real OTLP/HTTP protobuf exporter through
 * the /v1/metrics channel.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import pino from "pino";
import { ExportResultCode, type ExportResult } from "@opentelemetry/core";
import { OTLPMetricExporter } from "@opentelemetry/exporter-metrics-otlp-proto";
import { MeterProvider, MetricReader, type ResourceMetrics } from "@opentelemetry/sdk-metrics";
import type { CollectorTokens } from "../collectors/tokens.ts";
import { MetricsChannel } from "./channel.ts";
import { BUCKETS } from "./history.ts";
import { meaningOf } from "./names.ts";
import { ThroughputWindow, type CollectorWindow } from "./window.ts";
import { Telemetry } from "./index.ts";
import { at } from "../../test/telemetry/points.ts";

const S = 1000;
const NOON = Date.parse("2026-11-24T12:00:00Z");
const accepted = meaningOf("otelcol_receiver_accepted_log_records")!;
const refused = meaningOf("otelcol_receiver_refused_log_records")!;
const sent = meaningOf("otelcol_exporter_sent_log_records")!;
const failed = meaningOf("otelcol_exporter_send_failed_log_records")!;
const incoming = meaningOf("otelcol_processor_incoming_items")!;
const cpu = meaningOf("otelcol_process_cpu_seconds")!;
const rss = meaningOf("otelcol_process_memory_rss")!;

/** A window on a clock the test moves. */
function clocked(limits: { maxCollectors?: number } = {}) {
  const clock = { now: NOON };
  const win = new ThroughputWindow({ ...limits, now: () => clock.now });
  return { clock, win };
}

/**
 * One push of a collector whose clock is in 1970 (point time `t` seconds), counting 11 records/s
 * in (1 refused), 9/s sent and 1/s failed, 0.5 CPU s/s, `memory` bytes.
 */
function push(win: ThroughputWindow, id: string, t: number, start = 1) {
  const w: CollectorWindow = win.touch(id);
  const n = t - (start > 1 ? start : 1000);
  win.add(w, "acc", accepted, "otlp/app", "logs", 10 * n, t * S, start * S, "cumulative");
  win.add(w, "ref", refused, "otlp/app", "logs", n, t * S, start * S, "cumulative");
  win.add(w, "sent", sent, "otlp/gw", "logs", 9 * n, t * S, start * S, "cumulative");
  win.add(w, "fail", failed, "otlp/gw", "logs", n, t * S, start * S, "cumulative");
  win.add(w, "proc", incoming, "filter/x", "logs", 100 * n, t * S, start * S, "cumulative");
  win.add(w, "cpu", cpu, "", null, n / 2, t * S, start * S, "cumulative");
  win.add(w, "rss", rss, "", null, 1e6 * t, t * S, 0, "gauge");
}

const nulls = (n: number) => Array<null>(n).fill(null);

describe("throughput history", () => {
  test("pushes every 60 s fill every 15 s bucket, on the server's clock whatever the collector's says", () => {
    const { clock, win } = clocked();
    for (let i = 0; i <= 2; i++) {
      clock.now = NOON + i * 60 * S;
      push(win, "c1", 1000 + i * 60);
    }
    const h = win.history("c1")!;
    expect(h.step).toBe(15);
    expect(h.times).toHaveLength(BUCKETS);
    // The hour up to the last report (12:02), each bucket named by its end, in seconds since the epoch.
    expect(h.times.at(-1)).toBe((NOON + 120 * S) / 1000);
    expect(h.times[0]).toBe((NOON + 120 * S - 3600 * S + 15 * S) / 1000);
    expect(new Date(h.times.at(-1)! * 1000).getUTCFullYear()).toBe(2026);
    // The first push is only a baseline: the two minutes after it are 8 buckets.
    const filled = (v: number) => [...nulls(BUCKETS - 8), ...Array<number>(8).fill(v)];
    expect(h.signals).toEqual([{ signal: "logs", in: filled(11), out: filled(9), errors: filled(2) }]);
    expect(h.process.cpu).toEqual(filled(0.5));
    // Memory is a level: each bucket has the value reported over it.
    expect(h.process.memoryRss.slice(-8)).toEqual([...Array<number>(4).fill(1060e6), ...Array<number>(4).fill(1120e6)]);
  });

  test("the fleet's records/s over the hour is every collector's in, bucket by bucket; only measured buckets", () => {
    const { clock, win } = clocked();
    for (let i = 0; i <= 2; i++) {
      clock.now = NOON + i * 60 * S;
      push(win, "c1", 1000 + i * 60);
      if (i > 0) push(win, "c2", 1000 + i * 60);
    }
    // 15 s on, the bucket the last pushes ended in is complete; c2 started a minute after c1.
    clock.now = NOON + 135 * S;
    const fleet = win.fleetHistory();
    expect(fleet.map((p) => p.time)).toEqual(Array.from({ length: 8 }, (_, i) => NOON + (i + 1) * 15 * S));
    expect(fleet.map((p) => p.value)).toEqual([...Array<number>(4).fill(11), ...Array<number>(4).fill(22)]);
    expect(new ThroughputWindow({ now: () => NOON }).fleetHistory()).toEqual([]);
  });

  test("a restart counts from its start time; the silence before it is a gap, not zero", () => {
    const { clock, win } = clocked();
    for (const i of [0, 1]) {
      clock.now = NOON + i * 60 * S;
      push(win, "c1", 1000 + i * 60);
    }
    // Restarted 60 s before its next push, ten minutes later: the new process counts from 0 since then.
    clock.now = NOON + 11 * 60 * S;
    push(win, "c1", 1000 + 660, 1600);
    const logs = win.history("c1")!.signals[0]!;
    expect(logs.in.slice(-44)).toEqual([...Array<number>(4).fill(11), ...nulls(36), ...Array<number>(4).fill(11)]);
  });

  test("bounded: an hour per collector however long it reports, and no more collectors than the window keeps", () => {
    const { clock, win } = clocked({ maxCollectors: 2 });
    for (let i = 0; i <= 120; i++) {
      clock.now = NOON + i * 60 * S;
      push(win, "c1", 1000 + i * 60);
    }
    const h = win.history("c1")!;
    expect(h.times).toHaveLength(BUCKETS);
    expect(h.times.at(-1)! - h.times[0]!).toBe(3600 - 15);
    expect(h.signals[0]!.out.every((v) => v === 9)).toBe(true);
    push(win, "c2", 1000);
    push(win, "c3", 1000);
    expect(win.history("c1")).toBeNull();
    expect(win.history("c3")!.signals).toEqual([]); // one push: a baseline, nothing to chart yet
  });
});

class ManualReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

describe("throughput history from the OTLP protobuf exporter", () => {
  const clock = { now: NOON };
  const telemetry = new Telemetry({ now: () => clock.now });
  const tokens = { verify: async (token: string) => (token === "t-1" ? "c1" : null) } as unknown as CollectorTokens;
  const channel = new MetricsChannel({ collectorTokens: tokens, metricsTokens: tokens }, telemetry.window);
  let server: ReturnType<typeof Bun.serve>;
  beforeAll(() => {
    server = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: (req, srv) =>
        channel.handle({ req, url: new URL(req.url), remoteAddr: null, requestId: "r", log: pino({ level: "silent" }), server: srv as never, secure: false }),
    });
  });
  afterAll(() => server.stop(true));

  test("two exports 30 s apart fill the two buckets between their arrivals", async () => {
    const reader = new ManualReader();
    const provider = new MeterProvider({ readers: [reader] });
    const spans = provider.getMeter("otelcol").createCounter("otelcol_receiver_accepted_spans");
    const exporter = new OTLPMetricExporter({ url: `http://127.0.0.1:${server.port}/v1/metrics`, headers: { Authorization: "Bearer t-1" } });
    const send = (rm: ResourceMetrics) => new Promise<ExportResult>((resolve) => exporter.export(rm, resolve));
    spans.add(100, { receiver: "otlp/apm" });
    expect((await send(at((await reader.collect()).resourceMetrics, 5000))).code).toBe(ExportResultCode.SUCCESS);
    clock.now = NOON + 30 * S;
    spans.add(300, { receiver: "otlp/apm" });
    expect((await send(at((await reader.collect()).resourceMetrics, 5030))).code).toBe(ExportResultCode.SUCCESS);
    await exporter.shutdown();
    await provider.shutdown();

    const h = await telemetry.history({ collectors: { get: async () => ({}) } as never }, "c1");
    expect(h.times.at(-1)).toBe((NOON + 30 * S) / 1000);
    expect(h.signals.map((s) => [s.signal, s.in.slice(-3), s.out.slice(-3)])).toEqual([["traces", [null, 10, 10], [null, null, null]]]);
  });
});
