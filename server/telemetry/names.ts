/**
 * The collector's internal metrics this server reads, under every spelling a
 * collector has used: Prometheus-style `otelcol_receiver_accepted_spans_total`,
 * OTLP-style `otelcol_receiver_accepted_spans`, dotted `otelcol.receiver.accepted_spans`,
 * and without the `otelcol` prefix. Anything else is ignored.
 */
import type { Signal } from "../../shared/config-records.ts";

export type ComponentKind = "receiver" | "processor" | "exporter";

/** What a series contributes to: a component's in/out/errors counter, or a process figure. */
export type Meaning =
  | { kind: ComponentKind; field: "in" | "out" | "errors" | "inout"; signal: Signal | null }
  | { kind: "process"; field: "cpu" | "memoryRss" | "uptime" };

const ITEM_SIGNAL: Record<string, Signal> = { log_records: "logs", spans: "traces", metric_points: "metrics" };

const TABLE = new Map<string, Meaning>();
for (const [suffix, signal] of Object.entries(ITEM_SIGNAL)) {
  // A receiver's accepted items are both what came in and what it passed on;
  // refused (and, in newer collectors, failed) items came in and went nowhere.
  TABLE.set(`receiver_accepted_${suffix}`, { kind: "receiver", field: "inout", signal });
  TABLE.set(`receiver_refused_${suffix}`, { kind: "receiver", field: "errors", signal });
  TABLE.set(`receiver_failed_${suffix}`, { kind: "receiver", field: "errors", signal });
  TABLE.set(`exporter_sent_${suffix}`, { kind: "exporter", field: "inout", signal });
  TABLE.set(`exporter_send_failed_${suffix}`, { kind: "exporter", field: "errors", signal });
  TABLE.set(`exporter_enqueue_failed_${suffix}`, { kind: "exporter", field: "errors", signal });
  // Collectors before incoming/outgoing_items counted per processor like this.
  TABLE.set(`processor_accepted_${suffix}`, { kind: "processor", field: "in", signal });
  TABLE.set(`processor_refused_${suffix}`, { kind: "processor", field: "errors", signal });
}
TABLE.set("processor_incoming_items", { kind: "processor", field: "in", signal: null });
TABLE.set("processor_outgoing_items", { kind: "processor", field: "out", signal: null });
TABLE.set("process_cpu_seconds", { kind: "process", field: "cpu" });
TABLE.set("process_memory_rss", { kind: "process", field: "memoryRss" });
TABLE.set("process_memory_rss_bytes", { kind: "process", field: "memoryRss" });
TABLE.set("process_uptime", { kind: "process", field: "uptime" });
TABLE.set("process_uptime_seconds", { kind: "process", field: "uptime" });

/**
 * Processor types that count no items of their own and pass every record they
 * get on. The batch processor reports only its `processor_batch_*` metrics: it
 * is not built on processorhelper, which counts `processor_incoming_items` and
 * `processor_outgoing_items` (go.opentelemetry.io/collector/processor/batchprocessor
 * metadata.yaml and batch_processor.go at v0.149.0; the real collector in
 * test/supervisor/lifecycle.test.ts reports none for it). Every other
 * processor type the catalog renders (attributes, filter, resource, transform)
 * is built on processorhelper at that release.
 */
export const PASS_THROUGH_PROCESSORS: ReadonlySet<string> = new Set(["batch"]);

interface AttrLookup {
  get(key: string): string | undefined;
}

const cache = new Map<string, Meaning | null>();
const CACHE_LIMIT = 4096;

/** `otelcol.receiver.accepted_spans` → receiver in/out of traces; null for a metric this server does not read. */
export function meaningOf(name: string): Meaning | null {
  const hit = cache.get(name);
  if (hit !== undefined) return hit;
  let n = name.toLowerCase().replaceAll(".", "_");
  if (n.startsWith("otelcol_")) n = n.slice(8);
  if (n.endsWith("_total")) n = n.slice(0, -6);
  const meaning = TABLE.get(n) ?? null;
  // Names come from the network: remember only a bounded number of them.
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(name, meaning);
  return meaning;
}

/** The component id a series belongs to, from the attributes collectors have used for it. */
export function componentOf(kind: ComponentKind, attrs: AttrLookup): string | undefined {
  return attrs.get(kind) ?? attrs.get("otelcol.component.id");
}

/** `otel.signal` (or `otelcol.signal`) of a processor series: logs, metrics or traces. */
export function signalOf(attrs: AttrLookup): Signal | null {
  const raw = attrs.get("otel.signal") ?? attrs.get("otelcol.signal");
  if (raw === undefined) return null;
  const s = raw.toLowerCase();
  if (s === "logs" || s === "metrics" || s === "traces") return s;
  if (s === "log_records" || s === "log") return "logs";
  if (s === "spans" || s === "trace") return "traces";
  return null;
}
