/**
 * The real OpAMP supervisor running the real OpenTelemetry Collector
 * (test/peers: built before the tests by scripts/peers.sh) against svc over
 * loopback ws:// and over HTTP, set up as install.sh sets them up
 * (supervised.ts).
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
import { afterAll, afterEach, expect, test } from "bun:test";
import { EFFECTIVE } from "../../server/rollout/records.ts";
import { startTestServer, type TestServer } from "../harness.ts";
import { until } from "../opamp/helpers.ts";
import { freePort, removeTempDirs } from "../process/spawn.ts";
import {
  ANY_TOKEN,
  enrolled,
  LONG,
  otlpLogs,
  otlpSource,
  pipelineToSink,
  sendLogs,
  startSink,
  supervise,
  TRANSPORTS,
  type Sink,
  type Supervised,
} from "./supervised.ts";

let server: TestServer;
let supervised: Supervised | null = null;
let sink: Sink | null = null;

const call = <T = Record<string, unknown>>(path: string, method?: string, json?: unknown) => server.call<T>(path, method, json);

afterEach(async () => {
  await supervised?.stop();
  supervised = null;
  sink?.stop();
  await server?.stop();
});
afterAll(removeTempDirs);

test.each(TRANSPORTS)(
  "over $transport, install.sh's supervisor config runs the real collector under the real supervisor: a published pipeline delivers what dry-run predicts, the stored effective config holds no token and no drift, a restart command restarts it once, and a config it refuses at start is recorded failed",
  async ({ transport, env }) => {
    // A server on a known loopback port (its externalUrl must name it), and the sink.
    const port = freePort();
    server = await startTestServer({ SVC_LISTEN: `127.0.0.1:${port}`, SVC_EXTERNALURL: `http://127.0.0.1:${port}`, ...env });
    sink = startSink();
    const received = sink.received;
    supervised = await supervise(server.base, call, { transport });

    // The supervisor enrolls: one collector, online.
    const collector = await enrolled(call, supervised);

    // The pipeline: OTLP in → Drop Health Check Logs → a custom filter → batch → OTLP/HTTP to the sink.
    const receiverPort = freePort();
    const { pipelineId, sources } = await pipelineToSink(call, sink.port, [{ collectorId: collector.id, port: receiverPort }]);
    await call("/publish", "POST", {});
    await until(async () => (await server.app.delivery.target(collector.id))?.target.state === "current", LONG, 200).catch(async (error) =>
      Promise.reject(new Error(`${error}: ${JSON.stringify((await server.app.delivery.target(collector.id))?.target)}\n${supervised!.log()}`)),
    );

    // The records, and what svc's dry-run says survives them.
    const bodies = ["GET /healthz HTTP/1.1", "order 17 paid", "debug: cache warm", "GET /api/live-stream", "user 4 signed in", '{"path": "/ready"}'];
    const dry = await call<{ output: { resourceLogs: { scopeLogs: { logRecords: { body: { stringValue: string } }[] }[] }[] } }>(
      `/pipelines/${pipelineId}/dry-run`,
      "POST",
      {
        input: otlpLogs(bodies),
      },
    );
    const predicted = dry.output.resourceLogs.flatMap((r) => r.scopeLogs.flatMap((s) => s.logRecords.map((l) => l.body.stringValue)));
    expect(predicted.length).toBeGreaterThan(0);
    expect(predicted.length).toBeLessThan(bodies.length);
    await until(async () => sendLogs(receiverPort, bodies), LONG, 200);
    // A sentinel after them: once it arrives, everything sent before it was exported.
    await sendLogs(receiverPort, ["sentinel"]);
    await until(async () => received.includes("sentinel"), LONG, 100);
    expect(received.filter((b) => b !== "sentinel").sort()).toEqual([...predicted].sort());

    // What the collector runs, as svc stores it: no svc token anywhere, and no drift from the target.
    await until(async () => (await server.app.delivery.effective(collector.id)) !== null, LONG, 200);
    for (const doc of await server.app.store.list<{ files: { body: string }[] }>(EFFECTIVE)) {
      for (const file of doc.data.files) expect(file.body).not.toMatch(ANY_TOKEN);
    }
    const drift = await until(async () => (await server.app.delivery.target(collector.id))?.target.drift, LONG, 200);
    expect({ drifted: drift.drifted, reason: drift.reason ?? null }).toEqual({ drifted: false, reason: null });

    // The restart button: one more collector process start, and the collector comes back on the same config.
    const before = supervised.starts();
    await call(`/collectors/${collector.id}/restart`, "POST");
    await until(async () => supervised!.starts() === before + 1, LONG, 200);
    received.length = 0;
    await until(async () => (await sendLogs(receiverPort, ["after restart"])) && received.includes("after restart"), LONG, 200);
    expect((await server.app.delivery.target(collector.id))?.target.state).toBe("current");

    // A config valid to svc that the collector refuses at start (its receiver's port is taken): the real
    // supervisor reports FAILED, which svc records on the target with the supervisor's message. (This
    // supervisor, v0.149.0, says only that the collector exited, and does not go back to the last good
    // config by itself: see lifecycle.test.ts.)
    const taken = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    try {
      await call(`/sources/${sources.get(collector.id)!.sourceId}`, "PUT", otlpSource("apps 1", taken.port));
      await call("/commit", "POST", { message: "port taken" });
      await call("/publish", "POST", {});
      const failed = await until(
        async () => {
          const target = (await server.app.delivery.target(collector.id))?.target;
          return target?.state === "failed" && target;
        },
        LONG,
        200,
      );
      expect(failed.error).toContain("exit");
    } finally {
      taken.stop(true);
    }
  },
  240_000,
);
