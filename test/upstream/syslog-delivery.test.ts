/**
 * The syslog row of the parity table against the real collector: a syslog
 * line sent to otelcol-svc's syslog receiver (as svc renders it) arrives at
 * an OTLP/HTTP sink with the body, severity and attributes
 * catalog/sources/log-records.ts says; and svc's Runtime R shaping transform
 * (loki-chain.ts), run by the real collector's transform processor over the
 * record otelcol.receiver.loki makes of Alloy's syslog entry, gives the same
 * severity and attributes but the two the table says differ (version,
 * structured_data) — the body differs, as shown before publish.
 */
import { afterAll, expect, test } from "bun:test";
import { join } from "node:path";
import { connect } from "node:net";
import { LOG_RECORD_SHAPES } from "../../server/catalog/sources/log-records.ts";
import { syslogSource } from "../../server/catalog/sources/syslog/syslog.ts";
import { SHAPING_STATEMENTS } from "../../server/catalog/sources/loki-chain.ts";
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
const collectors: ReturnType<typeof Bun.spawn>[] = [];
afterAll(() => {
  for (const c of collectors) c.kill();
  sink.stop(true);
});

type OtlpRecord = Record<string, unknown> & { attributes: Attr[] };
const recordsAt = (i: number) =>
  (bodies[i] as { resourceLogs: { scopeLogs: { logRecords: OtlpRecord[] }[] }[] } | undefined)?.resourceLogs[0]?.scopeLogs[0]?.logRecords[0];
const attributesOf = (record: OtlpRecord) => Object.fromEntries(record.attributes.map((a) => [a.key, a.value]));
const exporter = { otlphttp: { endpoint: `http://127.0.0.1:${sink.port}`, encoding: "json", compression: "none" } };

/** Runs the real collector with these components and pipelines, exporting to the sink. */
async function runCollector({ pipelines, ...components }: Record<string, unknown>): Promise<void> {
  const dir = tempDir("svc-syslog-");
  const path = join(dir, "config.json");
  await Bun.write(path, JSON.stringify({ ...components, exporters: exporter, service: { telemetry: { metrics: { level: "none" } }, pipelines } }));
  collectors.push(Bun.spawn([peer("otelcol"), `--config=file:${path}`], { stdout: "ignore", stderr: Bun.file(join(dir, "log")) }));
}

let received: OtlpRecord | undefined;

test("the real collector's syslog receiver delivers the whole line, the syslog severity and priority/facility attributes", async () => {
  const port = freePort();
  const receiver = syslogSource.otelcol({ protocol: "rfc5424", transport: "tcp", listen_address: `127.0.0.1:${port}` });
  await runCollector({ receivers: { [receiver.type]: receiver.config }, pipelines: { logs: { receivers: [receiver.type], exporters: ["otlphttp"] } } });

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
  const record = (received = await until(async () => recordsAt(0), 60_000, 100, "a log record at the OTLP/HTTP sink"));
  expect(record.body).toEqual({ stringValue: line });
  // <165> = facility 20 (local4) * 8 + severity 5 (notice).
  expect(record.severityNumber).toBe(10); // SEVERITY_NUMBER_INFO2
  expect(record.severityText).toBe("notice");
  const attrs = Object.fromEntries(record.attributes.map((a) => [a.key, Object.values(a.value)[0]]));
  expect(attrs).toMatchObject({
    hostname: "host1",
    appname: "app1",
    proc_id: "42",
    msg_id: "ID7",
    message: "disk almost full",
    facility: "20",
    priority: "165",
  });
  // Each attribute the table says Runtime R lacks is there on Runtime O.
  for (const key of LOG_RECORD_SHAPES.syslog.attributes.differs as readonly string[]) {
    if (key !== "structured_data") expect(Object.keys(attrs)).toContain(key);
  }
}, 120_000);

test("svc's Runtime R shaping transform, run by the real collector, gives the syslog receiver's severity and attributes but version", async () => {
  expect(received).toBeDefined();
  const port = freePort();
  // What otelcol.receiver.loki makes of loki.source.syslog's entry after svc's loki.relabel: the message as the line,
  // each kept label a string attribute, and the label names (Alloy loki.go, syslogtarget.go at v1.18.1).
  const labels: Record<string, string> = {
    svc_syslog_severity: "notice",
    svc_syslog_facility: "local4",
    hostname: "host1",
    appname: "app1",
    proc_id: "42",
    msg_id: "ID7",
  };
  const lokiRecord = {
    timeUnixNano: "1795838400000000000",
    body: { stringValue: "disk almost full" },
    attributes: [
      { key: "loki.attribute.labels", value: { stringValue: Object.keys(labels).join(",") } },
      ...Object.entries(labels).map(([key, value]) => ({ key, value: { stringValue: value } })),
    ],
  };
  await runCollector({
    receivers: { otlp: { protocols: { http: { endpoint: `127.0.0.1:${port}` } } } },
    processors: { transform: { error_mode: "ignore", log_statements: [{ context: "log", statements: SHAPING_STATEMENTS.syslog }] } },
    pipelines: { logs: { receivers: ["otlp"], processors: ["transform"], exporters: ["otlphttp"] } },
  });
  await until(
    async () =>
      (
        await fetch(`http://127.0.0.1:${port}/v1/logs`, {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ resourceLogs: [{ scopeLogs: [{ logRecords: [lokiRecord] }] }] }),
        }).catch(() => null)
      )?.ok,
    60_000,
    200,
    "the collector's OTLP receiver to take the Loki-shaped record",
  );
  const shaped = await until(async () => recordsAt(1), 60_000, 100, "the shaped record at the OTLP/HTTP sink");
  expect(shaped.severityNumber).toBe(received!.severityNumber);
  expect(shaped.severityText).toBe(received!.severityText);
  const { version, ...shared } = attributesOf(received!);
  expect(version).toEqual({ intValue: "1" });
  expect(attributesOf(shaped)).toEqual(shared);
  // The body is what still differs: the message on Runtime R, the whole line on Runtime O.
  expect(shaped.body).toEqual({ stringValue: "disk almost full" });
}, 120_000);
