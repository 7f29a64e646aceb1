import { describe, expect, test } from "bun:test";
import { meaningOf } from "./names.ts";
import { SLOTS, ThroughputWindow } from "./window.ts";

const accepted = meaningOf("otelcol_receiver_accepted_log_records")!;
const incoming = meaningOf("otelcol_processor_incoming_items")!;
const outgoing = meaningOf("otelcol_processor_outgoing_items")!;
const S = 1000;

describe("names", () => {
  test("every spelling of a collector metric means the same", () => {
    for (const name of [
      "otelcol_receiver_accepted_log_records",
      "otelcol_receiver_accepted_log_records_total",
      "otelcol.receiver.accepted_log_records",
      "receiver_accepted_log_records",
    ]) {
      expect(meaningOf(name)).toEqual({ kind: "receiver", field: "inout", signal: "logs" });
    }
    expect(meaningOf("otelcol_process_memory_rss_bytes")).toEqual({ kind: "process", field: "memoryRss" });
    expect(meaningOf("otelcol_process_uptime_seconds_total")).toEqual({ kind: "process", field: "uptime" });
    expect(meaningOf("http.server.duration")).toBeNull();
  });
});

describe("rates", () => {
  test("cumulative counter: delta over the points' own time span", () => {
    const win = new ThroughputWindow();
    const w = win.touch("c1");
    win.add(w, "a", accepted, "otlp/app", "logs", 100, 1000 * S, 0, "cumulative");
    win.add(w, "a", accepted, "otlp/app", "logs", 600, 1010 * S, 0, "cumulative");
    const r = win.rates("c1")!;
    expect(r.window).toBe(10);
    expect(r.components).toEqual([{ id: "otlp/app", kind: "receiver", signal: "logs", in: 50, out: 50, errors: null }]);
  });

  test("a decrease is a restart: the new value counts from 0", () => {
    const win = new ThroughputWindow();
    const w = win.touch("c1");
    win.add(w, "a", accepted, "otlp/app", "logs", 1000, 0, 0, "cumulative");
    win.add(w, "a", accepted, "otlp/app", "logs", 1100, 10 * S, 0, "cumulative");
    win.add(w, "a", accepted, "otlp/app", "logs", 50, 20 * S, 0, "cumulative"); // restarted, 50 since
    expect(win.rates("c1")!.components[0]!.in).toBe(150 / 20);
  });

  test("a moved start time is a restart even when the value is higher", () => {
    const win = new ThroughputWindow();
    const w = win.touch("c1");
    win.add(w, "a", accepted, "otlp/app", "logs", 10, 1010 * S, 1, "cumulative");
    win.add(w, "a", accepted, "otlp/app", "logs", 20, 1020 * S, 1, "cumulative");
    win.add(w, "a", accepted, "otlp/app", "logs", 30, 1030 * S, 1025 * S, "cumulative");
    expect(win.rates("c1")!.components[0]!.in).toBe((10 + 30) / 20);
  });

  test("a counter that started inside the window counts from 0 at its start time", () => {
    const win = new ThroughputWindow();
    const w = win.touch("c1");
    win.add(w, "a", accepted, "otlp/app", "logs", 100, 1010 * S, 1000 * S, "cumulative");
    expect(win.rates("c1")!.components[0]!.in).toBe(10);
  });

  test("delta temporality: each value is the increment since its start", () => {
    const win = new ThroughputWindow();
    const w = win.touch("c1");
    win.add(w, "a", accepted, "otlp/app", "logs", 100, 1010 * S, 1000 * S, "delta");
    win.add(w, "a", accepted, "otlp/app", "logs", 300, 1020 * S, 1010 * S, "delta");
    expect(win.rates("c1")!.components[0]!.in).toBe(20);
  });

  test("duplicates and out-of-order points are ignored", () => {
    const win = new ThroughputWindow();
    const w = win.touch("c1");
    expect(win.add(w, "a", accepted, "otlp/app", "logs", 0, 10 * S, 0, "cumulative")).toBe("ok");
    expect(win.add(w, "a", accepted, "otlp/app", "logs", 100, 20 * S, 0, "cumulative")).toBe("ok");
    expect(win.add(w, "a", accepted, "otlp/app", "logs", 999, 15 * S, 0, "cumulative")).toBe("stale");
    expect(win.add(w, "a", accepted, "otlp/app", "logs", 999, 20 * S, 0, "cumulative")).toBe("stale");
    expect(win.rates("c1")!.components[0]!.in).toBe(10);
  });

  test("a filter lowers out, not in; transports add up", () => {
    const win = new ThroughputWindow();
    const w = win.touch("c1");
    for (const [t, i, o] of [
      [0, 0, 0],
      [10, 1000, 400],
    ] as const) {
      win.add(w, "in", incoming, "filter/logs_app_drop", "logs", i, t * S, 0, "cumulative");
      win.add(w, "out", outgoing, "filter/logs_app_drop", "logs", o, t * S, 0, "cumulative");
      win.add(w, "grpc", accepted, "otlp/app", "logs", i / 2, t * S, 0, "cumulative");
      win.add(w, "http", accepted, "otlp/app", "logs", i / 2, t * S, 0, "cumulative");
    }
    const [receiver, processor] = win.rates("c1")!.components;
    expect(processor).toEqual({ id: "filter/logs_app_drop", kind: "processor", signal: "logs", in: 100, out: 40, errors: null });
    expect(receiver!.in).toBe(100);
  });

  test("the window keeps about five minutes, thinned to a few samples, and the rate survives thinning", () => {
    const win = new ThroughputWindow();
    const w = win.touch("c1");
    // 10 s pushes for an hour at 7 records/s, with a restart half way.
    let value = 0;
    for (let t = 0; t <= 3600; t += 10) {
      value = t === 1800 ? 70 : value + 70;
      win.add(w, "a", accepted, "otlp/app", "logs", value, t * S, 0, "cumulative");
    }
    const r = win.rates("c1")!;
    expect(r.window).toBeGreaterThanOrEqual(300);
    expect(r.window).toBeLessThan(400);
    expect(r.components[0]!.in).toBeCloseTo(7, 6);
    expect(win.size().samples).toBeLessThanOrEqual(SLOTS);
  });

  test("process figures: cpu is a rate, memory and uptime are levels", () => {
    const win = new ThroughputWindow();
    const w = win.touch("c1");
    win.add(w, "cpu", meaningOf("otelcol_process_cpu_seconds")!, "", null, 10, 0, 0, "cumulative");
    win.add(w, "cpu", meaningOf("otelcol_process_cpu_seconds")!, "", null, 15, 10 * S, 0, "cumulative");
    win.add(w, "rss", meaningOf("otelcol_process_memory_rss")!, "", null, 1234, 10 * S, 0, "gauge");
    win.add(w, "up", meaningOf("otelcol_process_uptime")!, "", null, 99, 10 * S, 0, "gauge");
    expect(win.rates("c1")!.process).toEqual({ cpu: 0.5, memoryRss: 1234, uptime: 99 });
  });
});

describe("bounds", () => {
  test("10,000 collectors with many series each stay within the collector, series and sample limits", () => {
    const win = new ThroughputWindow({ maxCollectors: 2000, maxSeries: 16 });
    let full = 0;
    for (let c = 0; c < 10_000; c++) {
      const w = win.touch(`c${c}`);
      for (let push = 0; push < 12; push++) {
        for (let s = 0; s < 20; s++) {
          if (win.add(w, `s${s}`, accepted, `otlp/r${s}`, "logs", push * 10, push * 30 * S, 0, "cumulative") === "full") full++;
        }
      }
    }
    const size = win.size();
    expect(size.collectors).toBe(2000);
    expect(size.series).toBe(2000 * 16);
    expect(size.samples).toBeLessThanOrEqual(2000 * 16 * SLOTS);
    expect(full).toBe(10_000 * 12 * 4);
    // Least recently reporting collectors went first.
    expect(win.rates("c0")).toBeNull();
    expect(win.rates("c9999")).not.toBeNull();
  });

  test("a collector reporting again is kept over one that went quiet", () => {
    const win = new ThroughputWindow({ maxCollectors: 2 });
    win.touch("a");
    win.touch("b");
    win.touch("a");
    win.touch("c");
    expect(win.rates("a")).not.toBeNull();
    expect(win.rates("b")).toBeNull();
  });

  test("series of components no longer reported make room for new ones", () => {
    const win = new ThroughputWindow({ maxSeries: 2 });
    const w = win.touch("c1");
    win.add(w, "old1", accepted, "otlp/old1", "logs", 1, 0, 0, "cumulative");
    win.add(w, "old2", accepted, "otlp/old2", "logs", 1, 0, 0, "cumulative");
    expect(win.add(w, "new", accepted, "otlp/new", "logs", 1, 1000 * S, 0, "cumulative")).toBe("full");
    win.add(w, "old1", accepted, "otlp/old1", "logs", 1, 1000 * S, 0, "cumulative");
    expect(win.add(w, "new", accepted, "otlp/new", "logs", 1, 1001 * S, 0, "cumulative")).toBe("ok");
    expect(win.rates("c1")!.components.map((c) => c.id)).toEqual(["otlp/new", "otlp/old1"]);
  });
});
