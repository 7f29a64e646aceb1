/**
 * Memory of the throughput window and its hour of 15 s history, per collector and for a fleet.
 * Fills an in-process ThroughputWindow (server/telemetry/) for N collectors, each
 * reporting the series of bench/metrics-intake.ts's push (receiver accepted/refused
 * and exporter sent/failed for three signals, 16 processor series, process cpu,
 * memory and uptime: 49 series), on an injected clock: a first push, then one an
 * hour later, whose interval covers every bucket of the hour, then a push 15 s
 * later. Reads the heap (after a full GC) and RSS before, after the first push
 * (the window alone) and at the end (the history filled).
 * Usage: bun bench/throughput-history.ts [collectors=100000]
 */
import { heapStats } from "bun:jsc";
import { meaningOf, type Meaning } from "../server/telemetry/names.ts";
import { ThroughputWindow, type Temporality } from "../server/telemetry/window.ts";
import type { Signal } from "../shared/config-records.ts";

const [count = 100_000] = process.argv.slice(2).map(Number);
const clock = { now: Date.parse("2026-11-24T12:00:00Z") };
const window = new ThroughputWindow({ maxCollectors: count, now: () => clock.now });

interface Spec {
  key: string;
  meaning: Meaning;
  component: string;
  signal: Signal | null;
  temporality: Temporality;
}
const specs: Spec[] = [];
const series = (metric: string, component: string, signal: Signal | null, temporality: Temporality = "cumulative") =>
  specs.push({ key: `${metric}\u0000${component}`, meaning: meaningOf(metric)!, component, signal, temporality });
for (const [items, signal] of [
  ["log_records", "logs"],
  ["spans", "traces"],
  ["metric_points", "metrics"],
] as const) {
  for (const r of [0, 1, 2]) {
    series(`otelcol_receiver_accepted_${items}`, `otlp/source_${r}`, signal);
    series(`otelcol_receiver_refused_${items}`, `otlp/source_${r}`, signal);
  }
  for (const e of [0, 1]) {
    series(`otelcol_exporter_sent_${items}`, `otlphttp/dest_${e}`, signal);
    series(`otelcol_exporter_send_failed_${items}`, `otlphttp/dest_${e}`, signal);
  }
}
for (const direction of ["incoming", "outgoing"]) {
  for (let i = 0; i < 8; i++) series(`otelcol_processor_${direction}_items`, `filter/flow_${i}_drop`, (["logs", "traces", "metrics"] as const)[i % 3]!);
}
series("otelcol_process_cpu_seconds", "", null);
series("otelcol_process_memory_rss", "", null, "gauge");
series("otelcol_process_uptime", "", null, "gauge");

/** Every collector pushes every series at point time `seconds`, with counters at 10/s. */
function pushAll(seconds: number): void {
  for (let c = 0; c < count; c++) {
    const w = window.touch(`collector-${c}`);
    for (const s of specs)
      window.add(w, s.key, s.meaning, s.component, s.signal, s.temporality === "gauge" ? 5e7 : 10 * seconds, seconds * 1000, 1000, s.temporality);
  }
}

function memory(): { heap: number; rss: number } {
  Bun.gc(true);
  return { heap: heapStats().heapSize + heapStats().extraMemorySize, rss: process.memoryUsage().rss };
}

const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
const started = performance.now();
const before = memory();
pushAll(100_000);
const windowOnly = memory();
clock.now += 3600_000;
pushAll(103_600);
clock.now += 15_000;
pushAll(103_615);
const filled = memory();
const seconds = (performance.now() - started) / 1000;

const sample = window.history("collector-0")!;
const measured = sample.signals.flatMap((s) => [s.in, s.out, s.errors]).concat([sample.process.cpu, sample.process.memoryRss]);
const nonNull = measured.reduce((n, values) => n + values.filter((v) => v !== null).length, 0);
console.log(
  `${count} collectors × ${specs.length} series, ${seconds.toFixed(1)} s; a collector's history: ${sample.signals.length} signals, ${nonNull} of ${measured.length * sample.times.length} values filled`,
);
console.log(`heap: before ${mib(before.heap)}, window only ${mib(windowOnly.heap)}, with history ${mib(filled.heap)}`);
console.log(`rss:  before ${mib(before.rss)}, window only ${mib(windowOnly.rss)}, with history ${mib(filled.rss)}`);
console.log(
  `per collector (heap): window ${((windowOnly.heap - before.heap) / count).toFixed(0)} B, history ${((filled.heap - windowOnly.heap) / count).toFixed(0)} B, total ${((filled.heap - before.heap) / count).toFixed(0)} B`,
);
console.log(`per collector (rss): total ${((filled.rss - before.rss) / count).toFixed(0)} B`);
