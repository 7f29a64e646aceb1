/**
 * Target (docs/architecture.md): `/v1/metrics` intake ≥ 5,000 export requests/s with 50 points each.
 * Starts the real server as a child process, creates collectors and mints each
 * a per-collector token through the API, then drives closed-loop protobuf
 * export requests from this process. Every request carries 50 points shaped
 * like a collector's internal metrics (receiver/processor/exporter counters
 * and process figures) with a fresh timestamp, so each point is a new sample
 * of its series and not skipped as a duplicate.
 * Usage: bun bench/metrics-intake.ts [requests=50000] [concurrency=16] [collectors=100] [gzip=0]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { create, toBinary } from "@bufbuild/protobuf";
import { ExportMetricsServiceRequestSchema } from "../server/gen/opentelemetry/proto/collector/metrics/v1/metrics_service_pb.ts";
import { AggregationTemporality } from "../server/gen/opentelemetry/proto/metrics/v1/metrics_pb.ts";
import { closedLoop, fmt } from "./lib.ts";

const [total = 50_000, concurrency = 16, collectorCount = 100, gzip = 0] = process.argv.slice(2).map(Number);
const dir = mkdtempSync(join(tmpdir(), "svc-bench-"));
const admin = "svcsa_" + "M".repeat(40);
const port = 20000 + Math.floor(Math.random() * 20000);
const server = Bun.spawn([process.execPath, join(import.meta.dir, "../server/main.ts")], {
  env: {
    ...process.env,
    SVC_LISTEN: `127.0.0.1:${port}`,
    SVC_STORAGE_BOLTPATH: join(dir, "state.db"),
    SVC_BOOTSTRAP_ADMINTOKEN: admin,
    SVC_LOGGING_LEVEL: "warn",
  },
  stdout: "ignore",
  stderr: "inherit",
});
const base = `http://127.0.0.1:${port}`;
for (let i = 0; i < 400; i++) {
  if (
    await fetch(`${base}/healthz`).then(
      (r) => r.ok,
      () => false,
    )
  )
    break;
  await Bun.sleep(25);
}

async function call(path: string, method = "POST", body?: unknown): Promise<unknown> {
  const res = await fetch(`${base}/api/v1${path}`, {
    method,
    headers: { Authorization: `Bearer ${admin}`, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

/** A sentinel time whose 8 little-endian bytes are found in the encoding and rewritten per request. */
const SENTINEL = 0x1122334455667788n;
const str = (key: string, value: string) => ({ key, value: { value: { case: "stringValue" as const, value } } });
const point = (attrs: ReturnType<typeof str>[], value: number) => ({
  attributes: attrs,
  startTimeUnixNano: 1_000_000_000n,
  timeUnixNano: SENTINEL,
  value: { case: "asDouble" as const, value },
});
const metrics: { name: string; points: ReturnType<typeof point>[] }[] = [];
const signals = ["log_records", "spans", "metric_points"];
for (const s of signals) {
  const recv = [0, 1, 2].map((r) => [str("receiver", `otlp/source_${r}`), str("transport", "http")]);
  metrics.push({ name: `otelcol_receiver_accepted_${s}`, points: recv.map((a) => point(a, 1000)) });
  metrics.push({ name: `otelcol_receiver_refused_${s}`, points: recv.map((a) => point(a, 1)) });
  const exp = [0, 1].map((e) => [str("exporter", `otlphttp/dest_${e}`)]);
  metrics.push({ name: `otelcol_exporter_sent_${s}`, points: exp.map((a) => point(a, 900)) });
  metrics.push({ name: `otelcol_exporter_send_failed_${s}`, points: exp.map((a) => point(a, 2)) });
}
for (const dirn of ["incoming", "outgoing"]) {
  const procs = Array.from({ length: 8 }, (_, i) => [
    str("processor", `filter/flow_${i}_drop`),
    str("otel.signal", signals[i % 3] === "spans" ? "traces" : i % 3 === 0 ? "logs" : "metrics"),
  ]);
  metrics.push({ name: `otelcol_processor_${dirn}_items`, points: procs.map((a) => point(a, 500)) });
}
metrics.push({ name: "otelcol_process_cpu_seconds", points: [point([], 12)] });
metrics.push({ name: "otelcol_process_memory_rss", points: [point([], 5e7)] });
metrics.push({ name: "otelcol_process_uptime", points: [point([], 3600)] });
// Collectors send more than the server reads; those are decoded and skipped.
metrics.push({ name: "otelcol_process_runtime_heap_alloc_bytes", points: [point([], 2e7)] });
const pointCount = metrics.reduce((n, m) => n + m.points.length, 0);
const request = create(ExportMetricsServiceRequestSchema, {
  resourceMetrics: [
    {
      resource: { attributes: [str("service.name", "otelcol-contrib")] },
      scopeMetrics: [
        {
          scope: { name: "go.opentelemetry.io/collector" },
          metrics: metrics.map((m) => ({
            name: m.name,
            data: {
              case: "sum" as const,
              value: { aggregationTemporality: AggregationTemporality.CUMULATIVE, isMonotonic: true, dataPoints: m.points },
            },
          })),
        },
      ],
    },
  ],
});
const template = toBinary(ExportMetricsServiceRequestSchema, request);
const sentinel = new Uint8Array(8);
new DataView(sentinel.buffer).setBigUint64(0, SENTINEL, true);
const offsets: number[] = [];
for (let i = 0; i + 8 <= template.length; i++) {
  if (sentinel.every((b, j) => template[i + j] === b)) offsets.push(i);
}
if (offsets.length !== pointCount) throw new Error(`found ${offsets.length} time fields for ${pointCount} points`);

const collectors: { token: string; seconds: number }[] = [];
for (let i = 0; i < collectorCount; i++) {
  const { id } = (await call("/collectors", "POST", { name: `bench-${i}` })) as { id: string };
  const { token } = (await call(`/collectors/${id}/otlp-token`)) as { token: string };
  collectors.push({ token, seconds: 1_000_000 });
}

let turn = 0;
/** Each request: the next collector, its time 10 s after its previous push. */
function nextRequest(): { token: string; body: Uint8Array<ArrayBuffer> } {
  const c = collectors[turn++ % collectors.length]!;
  c.seconds += 10;
  const body = template.slice();
  const view = new DataView(body.buffer);
  const nanos = BigInt(c.seconds) * 1_000_000_000n;
  for (const o of offsets) view.setBigUint64(o, nanos, true);
  return { token: c.token, body: gzip ? new Uint8Array(gzipSync(body)) : body };
}

let failures = 0;
const push = async () => {
  const { token, body } = nextRequest();
  const res = await fetch(`${base}/v1/metrics`, {
    method: "POST",
    headers: {
      Authorization: `Bearer ${token}`,
      "Content-Type": "application/x-protobuf",
      ...(gzip ? { "Content-Encoding": "gzip" } : {}),
    },
    body,
  });
  if (res.status !== 200) failures++;
  await res.arrayBuffer();
};

try {
  console.log(
    `points per request: ${pointCount}, body ${template.length} bytes${gzip ? " (gzipped per request)" : ""}, collectors: ${collectorCount}, requests: ${total}, concurrency: ${concurrency}`,
  );
  await closedLoop(2000, concurrency, push); // warm-up
  const result = await closedLoop(total, concurrency, push);
  console.log(`intake: ${fmt(result)}; non-200: ${failures}`);
  console.log(`target ≥ 5,000 req/s: ${result.perSecond >= 5000 ? "met" : "NOT met"}`);
  const sample = (await call(`/collectors?limit=1`, "GET")) as { items: { id: string }[] };
  const t = await call(`/collectors/${sample.items[0]!.id}/throughput`, "GET");
  console.log(`throughput of one collector: ${JSON.stringify(t).slice(0, 300)}…`);
} finally {
  server.kill();
  await server.exited;
  rmSync(dir, { recursive: true, force: true });
}
