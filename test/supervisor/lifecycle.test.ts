/**
 * The real OpAMP supervisor and collector (test/peers, v0.149.0) through what
 * happens to svc around them, over loopback ws:// and over HTTP
 * (supervised.ts sets them up as install.sh does):
 *
 * 1. Own metrics. svc offers the supervisor the own-metrics connection
 *    settings; the supervisor writes them into the collector's
 *    `service.telemetry.metrics`, and the collector's own metrics reach
 *    `/v1/metrics`. The answers behind the collector page (throughput and its
 *    history, the topology's flows), the pipeline canvas (pipeline rates) and
 *    the dashboard show real, non-zero rates for the records sent.
 * 2. Nothing changes on the collector when its token is rotated, and when a
 *    real server process (same state file and port) is stopped with SIGTERM
 *    and then killed with -9: no collector process start, the same merged
 *    config (the supervisor's effective.yaml, byte for byte) and the same
 *    own-metrics settings it was sent, while the rotated-away token is refused.
 *    "Nothing happened" is made observable with a barrier: a restart command
 *    goes out after anything svc already sent on the session, so once the
 *    command's one start is seen, an earlier settings change would have been
 *    taken in (its settings file rewritten) before it. Over HTTP a command is
 *    answered alone and anything pending follows in the next poll, so the
 *    barrier also waits for two more polls.
 * 3. A staged rollout whose second config is valid to svc but refused by the
 *    collector at start (its receiver's port is taken) is paused: the real
 *    supervisor reports FAILED, and the rollout's status carries its message.
 *    Supervisor v0.149.0 (supervisor/supervisor.go, runAgentProcess: on the
 *    collector's exit while the config-apply timer runs it reports
 *    `Agent exited unexpectedly with exit code %d while applying
 *    configuration`, then restarts the collector on the same config every 5
 *    s) does not go back to the last good config by itself, so the failed
 *    collector stays failed; the batch not released keeps its config.
 *
 * Every wait has its own deadline that names what it waits for; nothing is timed.
 */
import { afterAll, afterEach, expect, test } from "bun:test";
import { fromBinary } from "@bufbuild/protobuf";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Dashboard } from "../../shared/dashboard.ts";
import type { RolloutStatus } from "../../shared/rollouts.ts";
import type { Throughput, ThroughputHistory } from "../../shared/throughput.ts";
import type { PipelineRates } from "../../shared/pipelines.ts";
import { ConnectionSettingsOffersSchema } from "../../server/gen/opamp/v1/opamp_pb.ts";
import { jsonCaller } from "../client.ts";
import { startTestServer, type TestServer } from "../harness.ts";
import { until } from "../opamp/helpers.ts";
import { bootstrapToken, freePort, killAll, removeTempDirs, startServer, tempDir, type ServerProcess } from "../process/spawn.ts";
import {
  enrolled,
  LONG,
  otlpSource,
  pipelineToSink,
  sendLogs,
  startSink,
  supervise,
  target,
  TRANSPORTS,
  type Call,
  type Sink,
  type Supervised,
  type Transport,
} from "./supervised.ts";

const supervisors: Supervised[] = [];
let sink: Sink | null = null;
let harness: TestServer | null = null;

afterEach(async () => {
  await Promise.all(supervisors.splice(0).map((s) => s.stop()));
  sink?.stop();
  sink = null;
  await harness?.stop();
  harness = null;
  await killAll();
});
afterAll(removeTempDirs);

/** The collector pushes its own metrics every second (the supervisor sets no interval: see supervised.ts). */
const METRICS_INTERVAL_MS = 1000;

/** Records for the pipeline: kept, dropped as health checks, dropped by the custom filter. */
const RECORDS = ["order 17 paid", "GET /healthz HTTP/1.1", "debug: cache warm", "user 4 signed in"];

const positive = (value: number | null | undefined) => value !== null && value !== undefined && value > 0;

interface Shown {
  throughput: Throughput;
  history: ThroughputHistory;
  canvas: PipelineRates;
  dashboard: Dashboard;
}

/** What the UI's answers do not show yet, by name: empty once every one shows the records' rates. */
function missing({ throughput, history, canvas, dashboard }: Shown, collectorId: string, nodes: string[]): string[] {
  const out: string[] = [];
  const component = (kind: string) => throughput.components.find((c) => c.kind === kind && c.signal === "logs");
  if (!positive(component("receiver")?.in)) out.push("collector page: the receiver's accepted log records/s");
  if (!positive(component("exporter")?.out)) out.push("collector page: the exporter's sent log records/s");
  const flow = throughput.pipelines[0];
  if (!positive(flow?.in) || !positive(flow?.out)) out.push("collector page topology: the flow's records/s in and out");
  if (!positive(throughput.process.uptime)) out.push("collector page: the process uptime");
  const logs = history.signals.find((s) => s.signal === "logs");
  if (!logs?.in.some(positive) || !logs.out.some(positive)) out.push("collector page chart: the last hour's log records/s in and out");
  for (const id of nodes) {
    const node = canvas.nodes.find((n) => n.nodeId === id);
    if (!positive(node?.in) || !positive(node?.out)) out.push(`canvas: node ${id}'s records/s in and out`);
  }
  if (!dashboard.throughput.byRecords.some((c) => c.id === collectorId && c.rate > 0)) out.push("dashboard: the collector among the top by records/s");
  if (!positive(dashboard.fleetRate.current)) out.push("dashboard: the fleet's records/s now");
  return out;
}

/** Sends records until the collector page, canvas and dashboard all show their rates; the failure names what never showed. */
async function ratesShown(call: Call, collectorId: string, pipelineId: string, port: number, nodes: string[]): Promise<Shown> {
  let last: string[] = ["nothing read yet"];
  try {
    return await until(
      async () => {
        await sendLogs(port, RECORDS);
        const shown: Shown = {
          throughput: await call<Throughput>(`/collectors/${collectorId}/throughput`),
          history: await call<ThroughputHistory>(`/collectors/${collectorId}/throughput/history`),
          canvas: await call<PipelineRates>(`/pipelines/${pipelineId}/rates`),
          dashboard: await call<Dashboard>("/dashboard"),
        };
        last = missing(shown, collectorId, nodes);
        return last.length === 0 && shown;
      },
      LONG,
      250,
      "the collector's own metrics on the collector page, canvas and dashboard",
    );
  } catch (error) {
    throw new Error(`${error}; still missing: ${last.join("; ")}`);
  }
}

/** The collector page's own-metrics figures once a push reached this server after `since` with records in it. */
async function reporting(call: Call, collectorId: string, port: number, since: number): Promise<Throughput> {
  return until(
    async () => {
      await sendLogs(port, RECORDS);
      const throughput = await call<Throughput>(`/collectors/${collectorId}/throughput`);
      const receiver = throughput.components.find((c) => c.kind === "receiver");
      return throughput.lastReportAt !== null && Date.parse(throughput.lastReportAt) > since && positive(receiver?.in) && throughput;
    },
    LONG,
    250,
    "the collector's own metrics pushed to this server",
  );
}

/** The records reach the sink through the collector (it runs the pipeline). */
async function delivering(sinkAt: Sink, port: number, text: string): Promise<void> {
  await until(async () => (await sendLogs(port, [text])) && sinkAt.received.includes(text), LONG, 200, `"${text}" at the sink`);
}

/** HTTP polls the server process answered (its request log). */
const opampPolls = (server: ServerProcess) => server.stdout().split('"path":"/v1/opamp"').length - 1;

/**
 * The restart command as a barrier: once the collector start it causes is
 * seen (and over HTTP two more polls answered), the supervisor has taken in
 * everything svc sent it before the command. Resolves with the start count.
 */
async function barrier(call: Call, server: ServerProcess, supervised: Supervised, collectorId: string, transport: Transport): Promise<number> {
  const starts = supervised.starts();
  await call(`/collectors/${collectorId}/restart`, "POST");
  await until(async () => supervised.starts() > starts, LONG, 100, "the restart command's collector start");
  if (transport === "http") {
    const polls = opampPolls(server);
    await until(async () => opampPolls(server) >= polls + 2, LONG, 100, "two more HTTP polls answered after the restart");
  }
  return supervised.starts();
}

const read = (supervised: Supervised, file: string) => readFileSync(join(supervised.storage, file));
/** What the supervisor keeps of the own-metrics settings svc last sent it (supervisor.go lastRecvOwnTelemetryConfigFile). */
const OWN_TELEMETRY = "last_recv_own_telemetry_config.dat";
/** The collector's merged config, as the supervisor runs it. */
const EFFECTIVE = "effective.yaml";

test.each(TRANSPORTS)(
  "over $transport, the real collector's own metrics show as real rates on the collector page, canvas and dashboard; rotating its token and restarting svc (SIGTERM, then kill -9) change nothing on it",
  async ({ transport, env }) => {
    const dir = tempDir("svc-lifecycle-");
    const port = freePort();
    const admin = bootstrapToken();
    const serverEnv = { SVC_BOOTSTRAP_ADMINTOKEN: admin, SVC_EXTERNALURL: `http://127.0.0.1:${port}`, SVC_LOGGING_LEVEL: "info", ...env };
    const start = () => startServer({ port, statePath: join(dir, "state.db"), env: serverEnv });
    let server = await start();
    const call = jsonCaller(server.base, admin);
    sink = startSink();
    const supervised = await supervise(server.base, call, { transport, metricsIntervalMs: METRICS_INTERVAL_MS });
    supervisors.push(supervised);
    const collector = await enrolled(call, supervised);
    const receiverPort = freePort();
    const { pipelineId } = await pipelineToSink(call, sink.port, [{ collectorId: collector.id, port: receiverPort }]);
    await call("/publish", "POST", {});
    const published = await until(
      async () => {
        const t = await target(call, collector.id);
        return t?.state === "current" && t;
      },
      LONG,
      200,
      "the pipeline applied",
    );
    await delivering(sink, receiverPort, "first");

    // 1. Own metrics, through what svc offered: its metrics credential, which the supervisor keeps and the collector pushes with.
    const shown = await ratesShown(call, collector.id, pipelineId, receiverPort, ["in", "health", "debug", "batch", "out"]);
    expect(missing(shown, collector.id, ["in", "health", "debug", "batch", "out"])).toEqual([]);
    const offered = fromBinary(ConnectionSettingsOffersSchema, read(supervised, OWN_TELEMETRY));
    expect(offered.ownMetrics?.destinationEndpoint).toBe(`${server.base}/v1/metrics`);
    const metricsHeader = offered.ownMetrics!.headers!.headers.find((h) => h.key === "Authorization")!.value;
    expect(metricsHeader).toMatch(/^Bearer svccm_[0-9A-Za-z]{43}$/);
    expect(read(supervised, EFFECTIVE).toString()).toContain(metricsHeader.slice("Bearer ".length));

    const ownTelemetry = read(supervised, OWN_TELEMETRY);
    const effective = read(supervised, EFFECTIVE);
    let starts = supervised.starts();
    /** Nothing changed on the collector: its starts are the barriers', it runs the same merged config, keeps the same settings, and delivers. */
    const unchanged = async (what: string) => {
      starts += 1;
      expect({ what, starts: supervised.starts() }).toEqual({ what, starts });
      expect(read(supervised, OWN_TELEMETRY).equals(ownTelemetry)).toBe(true);
      expect(read(supervised, EFFECTIVE).equals(effective)).toBe(true);
      const now = await target(call, collector.id);
      expect({ what, hash: now?.hash, state: now?.state }).toEqual({ what, hash: published.hash, state: "current" });
      await delivering(sink!, receiverPort, `after ${what}`);
    };
    const metricsPush = (token: string) =>
      fetch(`${server.base}/v1/metrics`, { method: "POST", headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" }, body: "{}" });

    // 2a. The collector token: minted, then rotated. The rotated-away one is refused everywhere; the collector is not touched.
    const first = await call<{ token: string }>(`/collectors/${collector.id}/otlp-token`, "POST");
    const rotatedAt = Date.now();
    const rotated = await call<{ token: string }>(`/collectors/${collector.id}/otlp-token`, "POST");
    expect((await metricsPush(first.token)).status).toBe(401);
    const opamp = await fetch(`${server.base}/v1/opamp`, {
      method: "POST",
      headers: { Authorization: `Bearer ${first.token}`, "Content-Type": "application/x-protobuf" },
      body: new Uint8Array(),
    });
    expect(opamp.status).toBe(401);
    expect((await metricsPush(rotated.token)).status).toBe(200);
    await barrier(call, server, supervised, collector.id, transport);
    await unchanged("the token rotation");
    // The metrics credential the collector holds still counts: its pushes after the rotation are taken.
    await reporting(call, collector.id, receiverPort, rotatedAt);

    // 2b. svc stopped with SIGTERM and started again on the same state and port: the supervisor reconnects and is offered the same settings.
    for (const signal of ["SIGTERM", "SIGKILL"] as const) {
      const stoppedAt = Date.now();
      const code = await server.stop(signal);
      if (signal === "SIGTERM") expect(code).toBe(0);
      server = await start();
      await until(
        async () => statSync(join(supervised.storage, OWN_TELEMETRY)).mtimeMs > stoppedAt,
        LONG,
        100,
        `the supervisor taking the restarted svc's settings (after ${signal})`,
      );
      await reporting(call, collector.id, receiverPort, stoppedAt);
      await barrier(call, server, supervised, collector.id, transport);
      await unchanged(`svc's ${signal}`);
    }
    expect((await metricsPush(first.token)).status).toBe(401);
    expect((await metricsPush(metricsHeader.slice("Bearer ".length))).status).toBe(200);
  },
  600_000,
);

test.each(TRANSPORTS)(
  "over $transport, a staged rollout whose config the real collector refuses at start pauses with the supervisor's message; the next batch keeps its config",
  async ({ transport, env }) => {
    const port = freePort();
    harness = await startTestServer({ SVC_LISTEN: `127.0.0.1:${port}`, SVC_EXTERNALURL: `http://127.0.0.1:${port}`, ...env });
    const call: Call = (path, method, json) => harness!.call(path, method, json);
    sink = startSink();
    // Two collectors, so the rollout has two batches.
    const one = await supervise(harness.base, call, { transport });
    supervisors.push(one);
    const a = await enrolled(call, one);
    const two = await supervise(harness.base, call, { transport });
    supervisors.push(two);
    const b = await enrolled(call, two, [a.id]);
    const ports = [freePort(), freePort()];
    const { sources } = await pipelineToSink(call, sink.port, [
      { collectorId: a.id, port: ports[0]! },
      { collectorId: b.id, port: ports[1]! },
    ]);
    await call("/publish", "POST", {});
    const good = new Map<string, string>();
    for (const c of [a, b]) {
      const t = await until(
        async () => {
          const now = await target(call, c.id);
          return now?.state === "current" && now;
        },
        LONG,
        200,
        `collector ${c.name} on the first config`,
      );
      good.set(c.id, t.hash);
    }

    // The second config: every receiver on a port something else holds. Valid to svc, refused by the collector at start.
    const taken = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    try {
      for (const [i, { sourceId }] of [...sources.values()].entries()) await call(`/sources/${sourceId}`, "PUT", otlpSource(`apps ${i + 1}`, taken.port));
      await call("/commit", "POST", { message: "port taken" });
      const rollout = await call<{ id: string; batchEnds: number[] }>("/publish", "POST", { strategy: { batchSize: 1, canary: { collectorIds: [a.id] } } });
      expect(rollout.batchEnds).toEqual([1, 2]);
      const paused = await until(
        async () => {
          const status = await call<RolloutStatus>(`/rollouts/${rollout.id}`);
          return status.state === "paused" && status;
        },
        LONG,
        200,
        "the rollout paused after its first batch",
      ).catch((error) => Promise.reject(new Error(`${error}\n${one.log()}`)));
      const message = "Agent exited unexpectedly with exit code 1 while applying configuration";
      expect(paused.collectors.find((c) => c.id === a.id)).toEqual({ id: a.id, state: "failed", error: message });
      expect(paused.pausedReason).toBe(`1 of 1 collectors in batch 1 failed (100 %, threshold 0 %); first: ${a.name}: ${message}`);
      expect(paused.batches!.map((batch) => batch.released)).toEqual([true, false]);
      expect(paused.collectors.find((c) => c.id === b.id)?.state).toBe("queued");

      // The supervisor keeps the refused config (it does not go back by itself): still failed, no rollback of its own.
      const failed = await target(call, a.id);
      expect({ state: failed?.state, error: failed?.error }).toEqual({ state: "failed", error: message });
      const history = await call<{ items: { state: string }[] }>(`/collectors/${a.id}/config-history`);
      expect(history.items.map((h) => h.state)).not.toContain("rolled_back_by_collector");
      // The batch not released runs the first config and delivers.
      expect(await target(call, b.id)).toMatchObject({ hash: good.get(b.id), state: "current" });
      await delivering(sink, ports[1]!, "second batch still delivers");
    } finally {
      taken.stop(true);
    }
  },
  300_000,
);
