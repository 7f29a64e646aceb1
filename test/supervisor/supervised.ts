/**
 * The real OpAMP supervisor running the real OpenTelemetry Collector
 * (test/peers: built before the tests by scripts/peers.sh) against a svc
 * server, set up as install.sh sets them up: the supervisor config svc serves
 * (`/v1/bootstrap?file=/etc/opampsupervisor/config.yaml`) with only its two
 * host paths moved into a temporary root, the collector binary (a wrapper
 * that counts the collector's process starts) and the storage directory.
 * Beside it: a loopback OTLP/HTTP sink that keeps the bodies of the log
 * records it is sent, and the pipeline the tests publish into it.
 */
import { chmodSync, mkdirSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse, stringify } from "yaml";
import type { Collector } from "../../shared/collectors.ts";
import { TOKEN_PREFIXES } from "../../server/auth/tokens.ts";
import { readVarint } from "../../server/opamp/wire.ts";
import { PROCESSOR_TEMPLATES } from "../../server/ottl/templates.ts";
import { until } from "../opamp/helpers.ts";
import { peer } from "../peers/peers.ts";
import { tempDir } from "../process/spawn.ts";

/** An admin API call that must succeed (the harness's `call`, or jsonCaller for a server process). */
export type Call = <T = Record<string, unknown>>(path: string, method?: string, json?: unknown) => Promise<T>;

/** Any svc token: a kind prefix and its 43 base62 characters (auth/tokens.ts names the kinds). */
export const ANY_TOKEN = new RegExp(`(${Object.values(TOKEN_PREFIXES).join("|")})[0-9A-Za-z]{43}`);

/** The deadline of one wait on the real peers: a collector start, an OpAMP exchange, an export (a busy machine stretches each). */
export const LONG = 90_000;

// Over HTTP the supervisor polls: svc offers a short heartbeat (its polling interval) so the test does not wait on opamp-go's 30 s.
export const TRANSPORTS = [
  { transport: "ws", env: {} },
  { transport: "http", env: { SVC_OPAMP_HEARTBEATSECONDS: "1" } },
] as const;
export type Transport = (typeof TRANSPORTS)[number]["transport"];

/** The string bodies of the log records in an OTLP ExportLogsServiceRequest (resource_logs 1 → scope_logs 2 → log_records 2 → body 5 → string_value 1). */
export function logBodies(bytes: Uint8Array): string[] {
  const fields = (message: Uint8Array, want: number): Uint8Array[] => {
    const out: Uint8Array[] = [];
    let offset = 0;
    while (offset < message.length) {
      const tag = readVarint(message, offset);
      if (!tag) break;
      offset = tag.next;
      const wire = Number(tag.value & 7n);
      if (wire === 0) offset = readVarint(message, offset)!.next;
      else if (wire === 1) offset += 8;
      else if (wire === 5) offset += 4;
      else if (wire === 2) {
        const length = readVarint(message, offset)!;
        const value = message.subarray(length.next, length.next + Number(length.value));
        if (Number(tag.value >> 3n) === want) out.push(value);
        offset = length.next + Number(length.value);
      } else break;
    }
    return out;
  };
  const bodies: string[] = [];
  for (const resource of fields(bytes, 1))
    for (const scope of fields(resource, 2))
      for (const record of fields(scope, 2))
        for (const body of fields(record, 5)) for (const text of fields(body, 1)) bodies.push(new TextDecoder().decode(text));
  return bodies;
}

export interface Sink {
  port: number;
  /** The bodies of every log record received, in arrival order. */
  received: string[];
  stop(): void;
}

/** A loopback OTLP/HTTP receiver that keeps the log records' bodies and answers every export with success. */
export function startSink(): Sink {
  const received: string[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      let body = new Uint8Array(await req.arrayBuffer());
      if (req.headers.get("content-encoding") === "gzip") body = Bun.gunzipSync(body);
      if (new URL(req.url).pathname === "/v1/logs") received.push(...logBodies(body));
      return new Response(new Uint8Array(), { headers: { "Content-Type": "application/x-protobuf" } });
    },
  });
  return { port: server.port!, received, stop: () => server.stop(true) };
}

/** An OTLP/JSON ExportLogsServiceRequest of one record per text. */
export function otlpLogs(texts: string[]) {
  return { resourceLogs: [{ resource: { attributes: [] }, scopeLogs: [{ scope: {}, logRecords: texts.map((text) => ({ body: { stringValue: text } })) }] }] };
}

/** Sends the records to a collector's OTLP/HTTP receiver; true when it took them. */
export async function sendLogs(port: number, texts: string[]): Promise<boolean> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/v1/logs`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(otlpLogs(texts)),
    });
    return res.ok;
  } catch {
    return false;
  }
}

export interface Supervised {
  root: string;
  /** The OpAMP enrollment token its config carries. */
  token: string;
  /** The supervisor's storage directory: its instance id, the collector's merged config (effective.yaml), what svc last sent it. */
  storage: string;
  proc: ReturnType<typeof Bun.spawn>;
  /** How many times the collector process was started so far. */
  starts(): number;
  /** The supervisor's log (its own and the collector's output), for a failure's message. */
  log(): string;
  /** Stops the supervisor (which stops its collector) and waits for it; kills any collector it left behind. */
  stop(): Promise<void>;
  /** Stops it as `stop` does and starts a new supervisor on the same files, as a host reboot or `systemctl restart` would. */
  restart(): Promise<void>;
}

export interface SuperviseOptions {
  transport: Transport;
  /**
   * The collector's own-metrics export interval. The supervisor's own-telemetry
   * template (supervisor/templates/owntelemetry.yaml at v0.149.0) sets no
   * `interval` on its periodic reader, so the OpenTelemetry SDK's default
   * applies: OTEL_METRIC_EXPORT_INTERVAL, else 60 s (go.opentelemetry.io/otel/sdk/metric
   * env.go). The wrapper sets the variable for the collector only.
   */
  metricsIntervalMs?: number;
  /** The enrollment token's lifetime in seconds (the server's default when absent). */
  expiresIn?: number;
}

/**
 * Mints an OpAMP enrollment token, writes what install.sh writes for it into
 * a fresh root and starts the supervisor on it. The supervisor starts the
 * collector through a wrapper that appends a line to a file at every start.
 */
export async function supervise(base: string, call: Call, options: SuperviseOptions): Promise<Supervised> {
  const root = tempDir("svc-realsup-");
  const { token } = await call<{ token: string }>("/enrollment-tokens", "POST", {
    kind: "opamp",
    ...(options.expiresIn === undefined ? {} : { expiresIn: options.expiresIn }),
  });
  const served = await fetch(`${base}/v1/bootstrap?file=/etc/opampsupervisor/config.yaml`, { headers: { Authorization: `Bearer ${token}` } });
  if (served.status !== 200) throw new Error(`GET /v1/bootstrap answered ${served.status}: ${await served.text()}`);
  const config = parse(await served.text());
  const starts = join(root, "collector-starts");
  const wrapper = join(root, "otelcol-contrib");
  const interval = options.metricsIntervalMs === undefined ? "" : `export OTEL_METRIC_EXPORT_INTERVAL=${options.metricsIntervalMs}\n`;
  // One line per start: the shell's pid, which exec hands to the collector.
  writeFileSync(wrapper, `#!/bin/sh\necho $$ >> '${starts}'\n${interval}exec '${peer("otelcol")}' "$@"\n`);
  chmodSync(wrapper, 0o755);
  config.agent.executable = wrapper;
  if (options.transport === "http") config.server.endpoint = config.server.endpoint.replace(/^ws/, "http");
  config.storage.directory = join(root, "var/lib/opampsupervisor");
  mkdirSync(config.storage.directory, { recursive: true });
  const configPath = join(root, "etc/opampsupervisor/config.yaml");
  mkdirSync(join(root, "etc/opampsupervisor"), { recursive: true });
  writeFileSync(configPath, stringify(config));
  const logPath = join(root, "supervisor.log");
  const log = openSync(logPath, "a");
  const spawn = () => Bun.spawn([peer("supervisor"), `--config=${configPath}`], { cwd: root, stdout: log, stderr: log });
  let proc = spawn();
  const pids = () => {
    try {
      return readFileSync(starts, "utf8").split("\n").filter(Boolean).map(Number);
    } catch {
      return [];
    }
  };
  const stop = async () => {
    // The supervisor stops its collector on SIGINT only (main.go at v0.149.0: signal.Notify(interrupt, os.Interrupt));
    // SIGTERM ends it at once and leaves the collector running.
    if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGINT");
    await proc.exited;
    // A collector a supervisor that died left behind: each one this wrapper started, by its pid, if that pid
    // is still a collector on this root's config (not a reused pid).
    for (const pid of pids()) {
      try {
        if (readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(root)) process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
  };
  return {
    root,
    token,
    storage: config.storage.directory,
    get proc() {
      return proc;
    },
    starts: () => pids().length,
    log: () => readFileSync(logPath, "utf8").slice(-4000),
    async restart() {
      await stop();
      proc = spawn();
    },
    stop,
  };
}

/** Waits for the collector `supervised` enrolled, online (or degraded) and not one of `known`; the wait's failure carries the supervisor's log. */
export async function enrolled(call: Call, supervised: Supervised, known: readonly string[] = []): Promise<Collector> {
  return until(
    async () =>
      (await call<{ items: Collector[] }>("/collectors")).items.find(
        (c) => c.managementMode === "opamp" && !known.includes(c.id) && (c.status === "online" || c.status === "degraded"),
      ),
    LONG,
    200,
    "the supervisor's collector online",
  ).catch((error) => Promise.reject(new Error(`${error}\n${supervised.log()}`)));
}

/** What pipelineToSink created. */
export interface SinkPipeline {
  destinationId: string;
  pipelineId: string;
  /** Per collector, the source routed to it and its receiver's port. */
  sources: Map<string, { sourceId: string; port: number }>;
}

/** An OTLP source receiving over HTTP on this loopback port, and no gRPC. */
export const otlpSource = (name: string, port: number) => ({
  name,
  type: "otlp",
  config: { grpc: { enabled: false }, http: { enabled: true, endpoint: `127.0.0.1:${port}` } },
});

/**
 * The pipeline the tests publish: OTLP in → Drop Health Check Logs → a custom
 * filter (drops `debug:` records) → batch → OTLP/HTTP to the sink, routed on
 * each collector from a source of its own (its own receiver port, so
 * collectors on one host do not compete for it). Committed, not published.
 */
export async function pipelineToSink(call: Call, sinkPort: number, receivers: { collectorId: string; port: number }[]): Promise<SinkPipeline> {
  const destination = await call<{ id: string }>("/destinations", "POST", {
    name: "sink",
    type: "otlphttp",
    config: { endpoint: `http://127.0.0.1:${sinkPort}` },
  });
  const health = PROCESSOR_TEMPLATES.find((t) => t.id === "drop-health-check-logs")!.processor;
  const pipeline = await call<{ id: string }>("/pipelines", "POST", {
    name: "apps to sink",
    signal: "logs",
    topology: {
      nodes: [
        { id: "in", kind: "source" },
        { id: "health", kind: "processor", processor: health },
        { id: "debug", kind: "processor", processor: { type: "filter", config: { error_mode: "ignore", logs: { log_record: ['IsMatch(body, "^debug:")'] } } } },
        { id: "batch", kind: "processor", processor: { type: "batch", config: {} } },
        { id: "out", kind: "destination", ref: destination.id },
      ],
      edges: [
        { id: "e1", source: "in", target: "health" },
        { id: "e2", source: "health", target: "debug" },
        { id: "e3", source: "debug", target: "batch" },
        { id: "e4", source: "batch", target: "out" },
      ],
    },
  });
  const sources = new Map<string, { sourceId: string; port: number }>();
  for (const [i, { collectorId, port }] of receivers.entries()) {
    const source = await call<{ id: string }>("/sources", "POST", otlpSource(`apps ${i + 1}`, port));
    await call(`/collectors/${collectorId}/sources`, "POST", { sourceId: source.id });
    await call(`/collectors/${collectorId}/destinations`, "POST", { destinationId: destination.id });
    await call("/routes", "POST", { collectorId, sourceId: source.id, pipelineId: pipeline.id });
    sources.set(collectorId, { sourceId: source.id, port });
  }
  await call("/commit", "POST", { message: "apps to sink" });
  return { destinationId: destination.id, pipelineId: pipeline.id, sources };
}

/** The collector's target as GET /collectors/{id}/effective-config answers it (what the collector page shows), null before the first publish. */
export async function target(call: Call, collectorId: string) {
  const answer = await call<{
    target: { hash: string; commit: string; state: string; error?: string; drift?: { drifted: boolean; reason?: string } } | null;
    effective: { files: { body: string }[] } | null;
  }>(`/collectors/${collectorId}/effective-config`);
  return answer.target;
}
