/**
 * OTLP/HTTP metrics decoding and the points this server keeps from them.
 * Protobuf and JSON bodies, gzip or not, both bounded; everything a request
 * carries that is not one of the collector's own throughput metrics is
 * accepted and ignored.
 */
import { fromJsonString } from "@bufbuild/protobuf";
import { ValidationError } from "../errors.ts";
import type { KeyValue } from "../gen/opentelemetry/proto/common/v1/common_pb.ts";
import { ExportMetricsServiceRequestSchema, type ExportMetricsServiceRequest } from "../gen/opentelemetry/proto/collector/metrics/v1/metrics_service_pb.ts";
import { AggregationTemporality } from "../gen/opentelemetry/proto/metrics/v1/metrics_pb.ts";
import type { Signal } from "../../shared/config-records.ts";
import { componentOf, meaningOf, signalOf, type Meaning } from "./names.ts";
import type { Temporality, ThroughputWindow } from "./window.ts";
import { Attrs, visitRequest, WireError, type PointVisitor } from "./wire.ts";

export type Encoding = "protobuf" | "json";

/** Media type of a request body: `application/x-protobuf` or `application/json`, parameters ignored. */
export function encodingOf(contentType: string | null): Encoding | null {
  if (contentType === null) return null;
  const semi = contentType.indexOf(";");
  const type = (semi === -1 ? contentType : contentType.slice(0, semi)).trim().toLowerCase();
  if (type === "application/x-protobuf") return "protobuf";
  if (type === "application/json") return "json";
  return null;
}

/** JSON bodies go through the generated schema (the OTLP JSON mapping); protobuf bodies through wire.ts. */
export function decodeJson(bytes: Uint8Array): ExportMetricsServiceRequest {
  try {
    const text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    return fromJsonString(ExportMetricsServiceRequestSchema, text, { ignoreUnknownFields: true });
  } catch (error) {
    throw new ValidationError(`The request body is not a valid OTLP ExportMetricsServiceRequest (json): ${(error as Error).message}`);
  }
}

export interface IngestResult {
  /** Points of the metrics this server reads that it could not use. */
  rejected: number;
  /** Why, for partial_success.error_message; empty when nothing was rejected. */
  message: string;
}

/** 1 = the point has no recorded value (a gap), per the OTLP data model. */
const NO_RECORDED_VALUE = 1;

/** Folds points into one collector's window and counts what it rejects. */
class Ingest implements PointVisitor {
  private meaning: Meaning | null = null;
  private name = "";
  private nonFinite = 0;
  private negative = 0;
  private unlabelled = 0;
  private full = 0;
  private readonly w: ReturnType<ThroughputWindow["touch"]>;

  constructor(
    private readonly window: ThroughputWindow,
    collectorId: string,
    private readonly now: number,
  ) {
    this.w = window.touch(collectorId, now);
  }

  wants(name: string): boolean {
    this.name = name;
    this.meaning = meaningOf(name);
    return this.meaning !== null;
  }

  point(sumTemporality: number, attrKey: string, attrs: () => Attrs, value: number, flags: number, timeMs: number, startMs: number): void {
    const meaning = this.meaning!;
    if ((flags & NO_RECORDED_VALUE) !== 0) return;
    let temporality: Temporality = sumTemporality === -1 ? "gauge" : sumTemporality === AggregationTemporality.DELTA ? "delta" : "cumulative";
    // Memory and uptime are read as levels however they are sent; counters sent as gauges are cumulative.
    if (meaning.kind === "process" && meaning.field !== "cpu") temporality = "gauge";
    else if (temporality === "gauge") temporality = "cumulative";
    if (!Number.isFinite(value)) {
      this.nonFinite++;
      return;
    }
    if (value < 0 && temporality !== "gauge") {
      this.negative++;
      return;
    }
    const key = `${this.name}\u0000${attrKey}`;
    let series = this.window.series(this.w, key);
    if (series === undefined) {
      // A new series: only now are its attributes decoded, for its component and signal.
      let component = "";
      let signal: Signal | null = null;
      if (meaning.kind !== "process") {
        const decoded = attrs();
        const id = componentOf(meaning.kind, decoded);
        signal = meaning.signal ?? signalOf(decoded) ?? pipelineSignal(decoded);
        if (id === undefined || signal === null) {
          this.unlabelled++;
          return;
        }
        component = id;
      }
      const created = this.window.create(this.w, key, meaning, component, signal);
      if (created === "full") {
        this.full++;
        return;
      }
      series = created;
    }
    this.window.addPoint(this.w, series, value, timeMs > 0 ? timeMs : this.now, startMs, temporality);
  }

  result(): IngestResult {
    const reasons: string[] = [];
    if (this.nonFinite) reasons.push(`${this.nonFinite} with a non-finite value`);
    if (this.negative) reasons.push(`${this.negative} counter points with a negative value`);
    if (this.unlabelled) reasons.push(`${this.unlabelled} without the component id or signal attribute`);
    if (this.full) reasons.push(`${this.full} of new series over the limit of ${this.window.maxSeries} series per collector`);
    const rejected = this.nonFinite + this.negative + this.unlabelled + this.full;
    return { rejected, message: rejected === 0 ? "" : `Rejected throughput points: ${reasons.join("; ")}.` };
  }
}

/** Folds a protobuf request's throughput points into the collector's window; `now` (ms) is its arrival and stands in for a missing timestamp. */
export function ingestProtobuf(window: ThroughputWindow, collectorId: string, bytes: Uint8Array, now = window.now()): IngestResult {
  // Decode fully before touching the window: a malformed body changes nothing.
  const points: [string, number, string, () => Attrs, number, number, number, number][] = [];
  let name = "";
  const collect: PointVisitor = {
    wants(metric) {
      name = metric;
      return meaningOf(metric) !== null;
    },
    point(temporality, attrKey, attrs, value, flags, timeMs, startMs) {
      points.push([name, temporality, attrKey, attrs, value, flags, timeMs, startMs]);
    },
  };
  try {
    visitRequest(bytes, collect);
  } catch (error) {
    if (error instanceof WireError) {
      throw new ValidationError(`The request body is not a valid OTLP ExportMetricsServiceRequest (protobuf): ${error.message}.`);
    }
    throw error;
  }
  const ingest = new Ingest(window, collectorId, now);
  let last = "";
  for (const [metric, temporality, attrKey, attrs, value, flags, timeMs, startMs] of points) {
    if (metric !== last) ingest.wants((last = metric));
    ingest.point(temporality, attrKey, attrs, value, flags, timeMs, startMs);
  }
  return ingest.result();
}

const nanosToMs = (n: bigint) => Number(n) / 1e6;

/** The same for a request decoded from JSON. */
export function ingestMessage(window: ThroughputWindow, collectorId: string, request: ExportMetricsServiceRequest, now = window.now()): IngestResult {
  const ingest = new Ingest(window, collectorId, now);
  for (const rm of request.resourceMetrics) {
    for (const sm of rm.scopeMetrics) {
      for (const metric of sm.metrics) {
        const data = metric.data;
        if ((data.case !== "sum" && data.case !== "gauge") || !ingest.wants(metric.name)) continue;
        const temporality = data.case === "sum" ? data.value.aggregationTemporality : -1;
        for (const p of data.value.dataPoints) {
          const attrs = new Attrs();
          for (const kv of p.attributes) {
            const v = stringValue(kv);
            if (v !== null) attrs.push(kv.key, v);
          }
          const value = p.value.case === "asDouble" ? p.value.value : p.value.case === "asInt" ? Number(p.value.value) : NaN;
          ingest.point(temporality, attrKeyOf(attrs), () => attrs, value, p.flags, nanosToMs(p.timeUnixNano), nanosToMs(p.startTimeUnixNano));
        }
      }
    }
  }
  return ingest.result();
}

function stringValue(kv: KeyValue): string | null {
  const v = kv.value?.value;
  if (!v || v.case === undefined) return null;
  switch (v.case) {
    case "stringValue":
      return v.value;
    case "intValue":
    case "doubleValue":
    case "boolValue":
      return String(v.value);
    default:
      return null;
  }
}

/** `otelcol.pipeline.id` is `<signal>` or `<signal>/<name>`. */
function pipelineSignal(attrs: Attrs): Signal | null {
  const pipeline = attrs.get("otelcol.pipeline.id");
  if (pipeline === undefined) return null;
  const head = pipeline.split("/", 1)[0];
  return head === "logs" || head === "metrics" || head === "traces" ? head : null;
}

/**
 * A JSON point's attributes in key order. (A protobuf point's series is named
 * by its attributes' bytes as sent; a collector sends a series' attributes the
 * same way every time.)
 */
function attrKeyOf(attrs: Attrs): string {
  let sorted = true;
  for (let i = 1; i < attrs.size; i++) if (attrs.keys[i - 1]! > attrs.keys[i]!) sorted = false;
  const order = sorted ? null : [...Array(attrs.size).keys()].sort((a, b) => (attrs.keys[a]! < attrs.keys[b]! ? -1 : 1));
  let key = "json";
  for (let j = 0; j < attrs.size; j++) {
    const i = order ? order[j]! : j;
    key += `\u0000${attrs.keys[i]}=${attrs.values[i]}`;
  }
  return key;
}
