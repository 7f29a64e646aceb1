/**
 * The real OpAMP supervisor running the real OpenTelemetry Collector
 * (test/peers: built before the tests by scripts/peers.sh) against svc over
 * loopback ws:// and over HTTP, with the supervisor config svc serves install.sh
 * (`/v1/bootstrap?file=/etc/opampsupervisor/config.yaml`), only its two
 * host paths moved into a temporary root: the collector binary (a wrapper
 * that counts the collector's process starts) and the storage directory.
 *
 * One supervisor run: svc publishes OTLP receiver → Drop Health Check Logs →
 * a custom filter → batch → OTLP/HTTP to a sink this test runs; the records
 * sent arrive at the sink exactly as svc's dry-run predicts; the effective
 * config svc stores holds no svc token and drifts from nothing; the restart
 * command restarts the collector process once; a config the collector
 * refuses at start (a port in use) is recorded failed with the supervisor's
 * message. Every wait has its own
 * deadline; nothing is timed.
 */
import { afterEach, expect, test } from "bun:test";
import { chmodSync, mkdirSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse, stringify } from "yaml";
import { EFFECTIVE } from "../../server/rollout/records.ts";
import { readVarint } from "../../server/opamp/wire.ts";
import type { Collector } from "../../shared/collectors.ts";
import { startTestServer, type TestServer } from "../harness.ts";
import { until } from "../opamp/helpers.ts";
import { peer } from "../peers/peers.ts";
import { freePort, tempDir } from "../process/spawn.ts";
import { PROCESSOR_TEMPLATES } from "../../server/ottl/templates.ts";

/** Any svc token: a kind prefix and its 43 base62 characters (auth/tokens.ts). */
const ANY_TOKEN = /svc(sa|en|ct|ag|us|ul)_[0-9A-Za-z]{43}/;
const LONG = 90_000;

let server: TestServer;
let supervisor: ReturnType<typeof Bun.spawn> | null = null;
let sink: ReturnType<typeof Bun.serve> | null = null;
const received: string[] = [];
let root: string;

const call = <T = Record<string, unknown>>(path: string, method?: string, json?: unknown) => server.call<T>(path, method, json);

/** The string bodies of the log records in an OTLP ExportLogsServiceRequest (resource_logs 1 → scope_logs 2 → log_records 2 → body 5 → string_value 1). */
function logBodies(bytes: Uint8Array): string[] {
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
      for (const record of fields(scope, 2)) for (const body of fields(record, 5)) for (const text of fields(body, 1)) bodies.push(new TextDecoder().decode(text));
  return bodies;
}

/** A server on a known loopback port (its externalUrl must name it), and the sink. */
async function start(env: Record<string, string>): Promise<void> {
  root = tempDir("svc-realsup-");
  received.length = 0;
  const port = freePort();
  server = await startTestServer({ SVC_LISTEN: `127.0.0.1:${port}`, SVC_EXTERNALURL: `http://127.0.0.1:${port}`, ...env });
  sink = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      let body = new Uint8Array(await req.arrayBuffer());
      if (req.headers.get("content-encoding") === "gzip") body = Bun.gunzipSync(body);
      if (new URL(req.url).pathname === "/v1/logs") received.push(...logBodies(body));
      return new Response(new Uint8Array(), { headers: { "Content-Type": "application/x-protobuf" } });
    },
  });
}

afterEach(async () => {
  if (supervisor) {
    supervisor.kill("SIGTERM");
    await supervisor.exited;
    supervisor = null;
  }
  sink?.stop(true);
  await server?.stop();
});

// Over HTTP the supervisor polls: svc offers a short heartbeat (its polling interval) so the test does not wait on opamp-go's 30 s.
const TRANSPORTS = [
  { transport: "ws", env: {} },
  { transport: "http", env: { SVC_OPAMP_HEARTBEATSECONDS: "1" } },
] as const;

test.each(TRANSPORTS)(
  "over $transport, install.sh's supervisor config runs the real collector under the real supervisor: a published pipeline delivers what dry-run predicts, the stored effective config holds no token and no drift, a restart command restarts it once, and a config it refuses at start is recorded failed",
  async ({ transport, env }) => {
    await start(env);
    // What install.sh writes: the server's rendering for the token, with this root's paths.
    const { token } = await call<{ token: string }>("/enrollment-tokens", "POST", { kind: "opamp" });
    const served = await fetch(`${server.base}/v1/bootstrap?file=/etc/opampsupervisor/config.yaml`, { headers: { Authorization: `Bearer ${token}` } });
    expect(served.status).toBe(200);
    const config = parse(await served.text());
    const starts = join(root, "collector-starts");
    const wrapper = join(root, "otelcol-contrib");
    writeFileSync(wrapper, `#!/bin/sh\necho start >> '${starts}'\nexec '${peer("otelcol")}' "$@"\n`);
    chmodSync(wrapper, 0o755);
    config.agent.executable = wrapper;
    if (transport === "http") config.server.endpoint = config.server.endpoint.replace(/^ws/, "http");
    config.storage.directory = join(root, "var/lib/opampsupervisor");
    mkdirSync(config.storage.directory, { recursive: true });
    const configPath = join(root, "etc/opampsupervisor/config.yaml");
    mkdirSync(join(root, "etc/opampsupervisor"), { recursive: true });
    writeFileSync(configPath, stringify(config));
    const log = openSync(join(root, "supervisor.log"), "a");
    supervisor = Bun.spawn([peer("supervisor"), `--config=${configPath}`], { cwd: root, stdout: log, stderr: log });
    const startCount = () => {
      try {
        return readFileSync(starts, "utf8").split("\n").filter(Boolean).length;
      } catch {
        return 0;
      }
    };
    const why = () => readFileSync(join(root, "supervisor.log"), "utf8").slice(-4000);

    // The supervisor enrolls: one collector, online.
    const collector = await until(
      async () => (await call<{ items: Collector[] }>("/collectors")).items.find((c) => c.managementMode === "opamp" && (c.status === "online" || c.status === "degraded")),
      LONG,
      200,
    ).catch((error) => Promise.reject(new Error(`${error}\n${why()}`)));

    // The pipeline: OTLP in → Drop Health Check Logs → a custom filter → batch → OTLP/HTTP to the sink.
    const receiverPort = freePort();
    const source = await call<{ id: string }>("/sources", "POST", {
      name: "apps",
      type: "otlp",
      config: { grpc: { enabled: false }, http: { enabled: true, endpoint: `127.0.0.1:${receiverPort}` } },
    });
    const destination = await call<{ id: string }>("/destinations", "POST", { name: "sink", type: "otlphttp", config: { endpoint: `http://127.0.0.1:${sink!.port}` } });
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
    await call(`/collectors/${collector.id}/sources`, "POST", { sourceId: source.id });
    await call(`/collectors/${collector.id}/destinations`, "POST", { destinationId: destination.id });
    await call("/routes", "POST", { collectorId: collector.id, sourceId: source.id, pipelineId: pipeline.id });
    await call("/commit", "POST", { message: "apps to sink" });
    await call("/publish", "POST", {});
    await until(async () => (await server.app.rollouts.target(collector.id))?.target.state === "current", LONG, 200).catch(async (error) =>
      Promise.reject(new Error(`${error}: ${JSON.stringify((await server.app.rollouts.target(collector.id))?.target)}\n${why()}`)),
    );

    // The records, and what svc's dry-run says survives them.
    const bodies = ["GET /healthz HTTP/1.1", "order 17 paid", "debug: cache warm", "GET /api/live-stream", "user 4 signed in", '{"path": "/ready"}'];
    const logs = (texts: string[]) => ({
      resourceLogs: [{ resource: { attributes: [] }, scopeLogs: [{ scope: {}, logRecords: texts.map((text) => ({ body: { stringValue: text } })) }] }],
    });
    const dry = await call<{ output: { resourceLogs: { scopeLogs: { logRecords: { body: { stringValue: string } }[] }[] }[] } }>(`/pipelines/${pipeline.id}/dry-run`, "POST", {
      input: logs(bodies),
    });
    const predicted = dry.output.resourceLogs.flatMap((r) => r.scopeLogs.flatMap((s) => s.logRecords.map((l) => l.body.stringValue)));
    expect(predicted.length).toBeGreaterThan(0);
    expect(predicted.length).toBeLessThan(bodies.length);
    const send = async (texts: string[]) => {
      const res = await fetch(`http://127.0.0.1:${receiverPort}/v1/logs`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(logs(texts)) });
      return res.ok;
    };
    await until(async () => send(bodies).catch(() => false), LONG, 200);
    // A sentinel after them: once it arrives, everything sent before it was exported.
    await send(["sentinel"]);
    await until(async () => received.includes("sentinel"), LONG, 100);
    expect(received.filter((b) => b !== "sentinel").sort()).toEqual([...predicted].sort());

    // What the collector runs, as svc stores it: no svc token anywhere, and no drift from the target.
    await until(async () => (await server.app.rollouts.effective(collector.id)) !== null, LONG, 200);
    for (const doc of await server.app.store.list<{ files: { body: string }[] }>(EFFECTIVE)) {
      for (const file of doc.data.files) expect(file.body).not.toMatch(ANY_TOKEN);
    }
    const drift = await until(async () => (await server.app.rollouts.target(collector.id))?.target.drift, LONG, 200);
    expect({ drifted: drift.drifted, reason: drift.reason ?? null }).toEqual({ drifted: false, reason: null });

    // The restart button: one more collector process start, and the collector comes back on the same config.
    const before = startCount();
    await call(`/collectors/${collector.id}/restart`, "POST");
    await until(async () => startCount() === before + 1, LONG, 200);
    received.length = 0;
    await until(async () => (await send(["after restart"]).catch(() => false)) && received.includes("after restart"), LONG, 200);
    expect((await server.app.rollouts.target(collector.id))?.target.state).toBe("current");

    // A config valid to svc that the collector refuses at start (its receiver's port is taken): the real
    // supervisor reports FAILED, which svc records on the target with the supervisor's message. (This
    // supervisor, v0.149.0, says only that the collector exited, and does not go back to the last good
    // config by itself.)
    const taken = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    try {
      await call(`/sources/${source.id}`, "PUT", { name: "apps", type: "otlp", config: { grpc: { enabled: false }, http: { enabled: true, endpoint: `127.0.0.1:${taken.port}` } } });
      await call("/commit", "POST", { message: "port taken" });
      await call("/publish", "POST", {});
      const failed = await until(async () => {
        const target = (await server.app.rollouts.target(collector.id))?.target;
        return target?.state === "failed" && target;
      }, LONG, 200);
      expect(failed.error).toContain("exit");
    } finally {
      taken.stop(true);
    }
  },
  240_000,
);
