/**
 * Runtime O's side of the syslog row of the parity table, from the real
 * collector: a syslog line sent to otelcol-svc's syslog receiver (as svc
 * renders it) arrives at an OTLP/HTTP sink with the body, severity and
 * attributes catalog/sources/log-records.ts says, so the difference svc shows
 * for Alloy collectors (message only, no priority/facility) is a real one.
 */
import { afterAll, expect, test } from "bun:test";
import { join } from "node:path";
import { connect } from "node:net";
import { LOG_RECORD_SHAPES } from "../../server/catalog/sources/log-records.ts";
import { syslogSource } from "../../server/catalog/sources/syslog.ts";
import { peer } from "../peers/peers.ts";
import { freePort, tempDir } from "../process/spawn.ts";
import { until } from "../opamp/helpers.ts";

type Attr = { key: string; value: Record<string, unknown> };
const bodies: unknown[] = [];
const sink = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(req) {
    if (new URL(req.url).pathname === "/v1/logs") bodies.push(await req.json());
    return new Response("{}", { headers: { "Content-Type": "application/json" } });
  },
});
let collector: ReturnType<typeof Bun.spawn> | null = null;
afterAll(() => {
  collector?.kill();
  sink.stop(true);
});

test("the real collector's syslog receiver delivers the whole line, the syslog severity and priority/facility attributes", async () => {
  const port = freePort();
  const receiver = syslogSource.otelcol({ protocol: "rfc5424", transport: "tcp", listen_address: `127.0.0.1:${port}` });
  const config = {
    receivers: { [receiver.type]: receiver.config },
    exporters: { otlphttp: { endpoint: `http://127.0.0.1:${sink.port}`, encoding: "json", compression: "none" } },
    service: { telemetry: { metrics: { level: "none" } }, pipelines: { logs: { receivers: [receiver.type], exporters: ["otlphttp"] } } },
  };
  const dir = tempDir("svc-syslog-");
  const path = join(dir, "config.json");
  await Bun.write(path, JSON.stringify(config));
  collector = Bun.spawn([peer("otelcol"), `--config=file:${path}`], { stdout: "ignore", stderr: Bun.file(join(dir, "log")) });

  const line = "<165>1 2026-11-28T04:00:00Z host1 app1 42 ID7 - disk almost full";
  // svc sets no octet counting: the receiver's TCP input splits on line feeds.
  const frame = `${line}\n`;
  await until(
    () =>
      new Promise<boolean>((resolve) => {
        const socket = connect(port, "127.0.0.1", () => socket.end(frame, () => resolve(true)));
        socket.on("error", () => resolve(false));
      }),
    60_000,
    200,
    "the collector's syslog receiver to accept a connection",
  );
  const record = await until(
    async () => (bodies[0] as { resourceLogs: { scopeLogs: { logRecords: Record<string, unknown>[] }[] }[] } | undefined)?.resourceLogs[0]?.scopeLogs[0]?.logRecords[0],
    60_000,
    100,
    "a log record at the OTLP/HTTP sink",
  );
  expect(record.body).toEqual({ stringValue: line });
  // <165> = facility 20 (local4) * 8 + severity 5 (notice).
  expect(record.severityNumber).toBe(10); // SEVERITY_NUMBER_INFO2
  expect(record.severityText).toBe("notice");
  const attrs = Object.fromEntries((record.attributes as Attr[]).map((a) => [a.key, Object.values(a.value)[0]]));
  expect(attrs).toMatchObject({ hostname: "host1", appname: "app1", proc_id: "42", msg_id: "ID7", message: "disk almost full", facility: "20", priority: "165" });
  // Each attribute the table says Runtime R lacks is there on Runtime O.
  for (const key of LOG_RECORD_SHAPES.syslog.attributes.differs as readonly string[]) {
    if (key !== "structured_data") expect(Object.keys(attrs)).toContain(key);
  }
}, 120_000);
