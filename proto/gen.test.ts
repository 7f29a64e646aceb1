// Guards the wire schemas under proto/ and the TypeScript generated from them.
//
// 1. Staleness: regenerates everything with buf into a temporary directory and
//    requires the result to be byte-identical to the committed server/gen/
//    tree. Fix a failure with `bun run gen` and commit the result.
// 2. Wire shape: builds one message per schema, round-trips it through
//    toBinary/fromBinary, and decodes field tags by hand to check that the
//    well-known field numbers and wire types are what the public specs say.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { create, equals, fromBinary, toBinary } from "@bufbuild/protobuf";
import { MethodOptions_IdempotencyLevel } from "@bufbuild/protobuf/wkt";

import {
  AgentCapabilities,
  AgentConfigMapSchema,
  AgentConfigObjectSchema,
  AgentRemoteConfigSchema,
  AgentToServerSchema,
  AvailableComponentsSchema,
  ConnectionSettingsOffersSchema,
  ConnectionSettingsStatusSchema,
  ConnectionSettingsStatuses,
  OpAMPConnectionSettingsSchema,
  ServerToAgentFlags,
  ServerToAgentSchema,
} from "../server/gen/opamp/v1/opamp_pb.ts";
import { KeyValueSchema as OpampKeyValueSchema } from "../server/gen/opamp/v1/anyvalue_pb.ts";
import { CollectorService, GetConfigRequestSchema, GetConfigResponseSchema, RemoteConfigStatuses } from "../server/gen/collector/v1/collector_pb.ts";
import {
  ExportMetricsServiceRequestSchema,
  ExportMetricsServiceResponseSchema,
  MetricsService,
} from "../server/gen/opentelemetry/proto/collector/metrics/v1/metrics_service_pb.ts";
import { AggregationTemporality, MetricSchema } from "../server/gen/opentelemetry/proto/metrics/v1/metrics_pb.ts";
import { ResourceSchema } from "../server/gen/opentelemetry/proto/resource/v1/resource_pb.ts";

const ROOT = join(import.meta.dir, "..");
const GEN = join(ROOT, "server", "gen");
const BUF = join(ROOT, "scripts", "buf.sh");

// ---------------------------------------------------------------------------
// Hand decoding of protobuf tags (no library help on purpose).
// ---------------------------------------------------------------------------

const VARINT = 0;
const I64 = 1;
const LEN = 2;
const I32 = 5;

type Field = { no: number; wire: number; body: Uint8Array; value?: bigint };

function readVarint(buf: Uint8Array, pos: number): [bigint, number] {
  let result = 0n;
  let shift = 0n;
  for (;;) {
    const b = buf[pos++];
    if (b === undefined) throw new Error("truncated varint");
    result |= BigInt(b & 0x7f) << shift;
    if ((b & 0x80) === 0) return [result, pos];
    shift += 7n;
  }
}

/** Splits one message level into its fields, in wire order. */
function fields(buf: Uint8Array): Field[] {
  const out: Field[] = [];
  let pos = 0;
  while (pos < buf.length) {
    const [tag, afterTag] = readVarint(buf, pos);
    const no = Number(tag >> 3n);
    const wire = Number(tag & 7n);
    pos = afterTag;
    switch (wire) {
      case VARINT: {
        const [v, next] = readVarint(buf, pos);
        out.push({ no, wire, body: buf.subarray(pos, next), value: v });
        pos = next;
        break;
      }
      case I64:
        out.push({ no, wire, body: buf.subarray(pos, pos + 8) });
        pos += 8;
        break;
      case LEN: {
        const [len, start] = readVarint(buf, pos);
        const end = start + Number(len);
        out.push({ no, wire, body: buf.subarray(start, end) });
        pos = end;
        break;
      }
      case I32:
        out.push({ no, wire, body: buf.subarray(pos, pos + 4) });
        pos += 4;
        break;
      default:
        throw new Error(`unexpected wire type ${wire} for field ${no}`);
    }
  }
  return out;
}

/** The single field with number `no`; fails unless exactly one is present. */
function field(buf: Uint8Array, no: number, wire: number): Field {
  const found = fields(buf).filter((f) => f.no === no);
  expect(found.length).toBe(1);
  const f = found[0]!;
  expect(f.wire).toBe(wire);
  return f;
}

function tagByte(no: number, wire: number): number {
  return (no << 3) | wire;
}

// ---------------------------------------------------------------------------
// 1. Generated code is up to date.
// ---------------------------------------------------------------------------

function listFiles(dir: string, base = dir): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...listFiles(p, base));
    else out.push(relative(base, p));
  }
  return out.sort();
}

describe("server/gen is generated from proto/", () => {
  let tmp = "";

  beforeAll(() => {
    tmp = mkdtempSync(join(tmpdir(), "svc-buf-gen-"));
  });

  afterAll(() => {
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  test("buf generate output matches the committed tree byte for byte", () => {
    const run = Bun.spawnSync([BUF, "generate", "--output", tmp], {
      cwd: ROOT,
      stdout: "pipe",
      stderr: "pipe",
    });
    if (run.exitCode !== 0) {
      throw new Error(`buf generate failed (${run.exitCode}): ${run.stderr.toString()}`);
    }

    const fresh = join(tmp, "server", "gen");
    const want = listFiles(fresh);
    const have = listFiles(GEN);
    expect(want.length).toBeGreaterThan(0);
    // Same set of files (a missing or extra file means `bun run gen` was not run).
    expect(have).toEqual(want);

    const stale = want.filter((rel) => !readFileSync(join(fresh, rel)).equals(readFileSync(join(GEN, rel))));
    if (stale.length > 0) {
      throw new Error(`server/gen is stale, run \`bun run gen\`: ${stale.join(", ")}`);
    }
    // buf and its plugin are processes of their own; on a busy 2-core machine they take seconds.
  }, 60_000);
});

// ---------------------------------------------------------------------------
// 2. Wire shape per schema.
// ---------------------------------------------------------------------------

describe("OpAMP (opamp.proto.v1)", () => {
  const uid = Uint8Array.from({ length: 16 }, (_, i) => i + 1);

  test("AgentToServer round-trips; instance_uid is field 1 bytes", () => {
    const caps =
      AgentCapabilities.AgentCapabilities_ReportsStatus |
      AgentCapabilities.AgentCapabilities_AcceptsRemoteConfig |
      AgentCapabilities.AgentCapabilities_ReportsHeartbeat |
      AgentCapabilities.AgentCapabilities_ReportsAvailableComponents;
    const msg = create(AgentToServerSchema, {
      instanceUid: uid,
      sequenceNum: 7n,
      capabilities: BigInt(caps),
      availableComponents: create(AvailableComponentsSchema, {
        hash: new Uint8Array([9, 9]),
        components: { receivers: { metadata: [create(OpampKeyValueSchema, { key: "k" })] } },
      }),
      connectionSettingsStatus: create(ConnectionSettingsStatusSchema, {
        status: ConnectionSettingsStatuses.ConnectionSettingsStatuses_APPLIED,
      }),
    });
    const bytes = toBinary(AgentToServerSchema, msg);

    expect(bytes[0]).toBe(0x0a); // field 1, length-delimited
    expect(bytes[1]).toBe(16);
    expect(field(bytes, 1, LEN).body).toEqual(uid);
    expect(field(bytes, 2, VARINT).value).toBe(7n); // sequence_num
    expect(field(bytes, 4, VARINT).value).toBe(BigInt(caps)); // capabilities
    field(bytes, 14, LEN); // available_components
    const status = field(bytes, 15, LEN); // connection_settings_status
    expect(field(status.body, 2, VARINT).value).toBe(1n);

    // Capability bits as published.
    expect(AgentCapabilities.AgentCapabilities_ReportsHeartbeat).toBe(0x2000);
    expect(AgentCapabilities.AgentCapabilities_ReportsAvailableComponents).toBe(0x4000);
    expect(AgentCapabilities.AgentCapabilities_ReportsConnectionSettingsStatus).toBe(0x8000);

    const back = fromBinary(AgentToServerSchema, bytes);
    expect(equals(AgentToServerSchema, back, msg)).toBe(true);
    expect(back.availableComponents?.components.receivers?.metadata[0]?.key).toBe("k");
  });

  test("ServerToAgent round-trips; remote_config is field 3", () => {
    const msg = create(ServerToAgentSchema, {
      remoteConfig: create(AgentRemoteConfigSchema, {
        config: create(AgentConfigMapSchema, {
          configMap: {
            "": create(AgentConfigObjectSchema, {
              body: new TextEncoder().encode("receivers: {}\n"),
              contentType: "text/yaml",
            }),
          },
        }),
        configHash: new Uint8Array([1, 2, 3]),
      }),
    });
    const bytes = toBinary(ServerToAgentSchema, msg);
    expect(bytes[0]).toBe(tagByte(3, LEN)); // 0x1a
    const rc = field(bytes, 3, LEN);
    expect(field(rc.body, 2, LEN).body).toEqual(new Uint8Array([1, 2, 3])); // config_hash

    const back = fromBinary(ServerToAgentSchema, bytes);
    expect(equals(ServerToAgentSchema, back, msg)).toBe(true);
  });

  test("ServerToAgent flags, capabilities and heartbeat interval", () => {
    const msg = create(ServerToAgentSchema, {
      instanceUid: uid,
      flags: BigInt(ServerToAgentFlags.ServerToAgentFlags_ReportAvailableComponents),
      capabilities: 1n,
      connectionSettings: create(ConnectionSettingsOffersSchema, {
        opamp: create(OpAMPConnectionSettingsSchema, { heartbeatIntervalSeconds: 30n }),
      }),
    });
    const bytes = toBinary(ServerToAgentSchema, msg);
    expect(bytes[0]).toBe(0x0a);
    expect(field(bytes, 6, VARINT).value).toBe(2n); // flags
    expect(field(bytes, 7, VARINT).value).toBe(1n); // capabilities
    const offers = field(bytes, 4, LEN); // connection_settings
    const opamp = field(offers.body, 2, LEN); // ConnectionSettingsOffers.opamp
    expect(opamp.body[0]).toBe(tagByte(4, VARINT)); // heartbeat_interval_seconds
    expect(field(opamp.body, 4, VARINT).value).toBe(30n);
    expect(equals(ServerToAgentSchema, fromBinary(ServerToAgentSchema, bytes), msg)).toBe(true);
  });
});

describe("OTLP metrics (opentelemetry.proto.*)", () => {
  test("ExportMetricsServiceRequest round-trips with the published numbers", () => {
    const msg = create(ExportMetricsServiceRequestSchema, {
      resourceMetrics: [
        {
          resource: create(ResourceSchema, {
            attributes: [{ key: "service.name", value: { value: { case: "stringValue", value: "otelcol" } } }],
            entityRefs: [{ type: "service", idKeys: ["service.name"] }],
          }),
          scopeMetrics: [
            {
              scope: { name: "otelcol/receiver" },
              metrics: [
                create(MetricSchema, {
                  name: "otelcol_process_uptime",
                  unit: "s",
                  data: {
                    case: "sum",
                    value: {
                      aggregationTemporality: AggregationTemporality.CUMULATIVE,
                      isMonotonic: true,
                      dataPoints: [{ timeUnixNano: 1_700_000_000_000_000_000n, value: { case: "asInt", value: 42n } }],
                    },
                  },
                }),
              ],
            },
          ],
        },
      ],
    });
    const bytes = toBinary(ExportMetricsServiceRequestSchema, msg);
    expect(bytes[0]).toBe(0x0a); // resource_metrics = 1

    const rm = field(bytes, 1, LEN);
    const resource = field(rm.body, 1, LEN);
    field(resource.body, 3, LEN); // Resource.entity_refs
    const sm = field(rm.body, 2, LEN); // scope_metrics
    const metric = field(sm.body, 2, LEN); // metrics
    const sum = field(metric.body, 7, LEN); // Metric.sum
    expect(field(sum.body, 2, VARINT).value).toBe(2n); // CUMULATIVE
    expect(field(sum.body, 3, VARINT).value).toBe(1n); // is_monotonic
    const point = field(sum.body, 1, LEN); // NumberDataPoint
    expect(field(point.body, 3, I64).body.length).toBe(8); // time_unix_nano fixed64
    const asInt = field(point.body, 6, I64); // as_int sfixed64
    expect(new DataView(asInt.body.buffer, asInt.body.byteOffset, 8).getBigInt64(0, true)).toBe(42n);

    const back = fromBinary(ExportMetricsServiceRequestSchema, bytes);
    expect(equals(ExportMetricsServiceRequestSchema, back, msg)).toBe(true);
  });

  test("ExportMetricsServiceResponse carries partial_success", () => {
    const msg = create(ExportMetricsServiceResponseSchema, {
      partialSuccess: { rejectedDataPoints: 3n, errorMessage: "dropped" },
    });
    const bytes = toBinary(ExportMetricsServiceResponseSchema, msg);
    expect(bytes[0]).toBe(0x0a);
    const ps = field(bytes, 1, LEN);
    expect(ps.body[0]).toBe(0x08); // rejected_data_points = 1, varint
    expect(field(ps.body, 1, VARINT).value).toBe(3n);
    expect(equals(ExportMetricsServiceResponseSchema, fromBinary(ExportMetricsServiceResponseSchema, bytes), msg)).toBe(true);
    expect(MetricsService.typeName).toBe("opentelemetry.proto.collector.metrics.v1.MetricsService");
    expect(MetricsService.method.export.name).toBe("Export");
  });
});

describe("Alloy remote config (collector.v1)", () => {
  test("GetConfigResponse.not_modified is field 3 varint", () => {
    const bytes = toBinary(GetConfigResponseSchema, create(GetConfigResponseSchema, { notModified: true }));
    expect([...bytes]).toEqual([0x18, 0x01]);

    const full = create(GetConfigResponseSchema, { content: "logging {}\n", hash: "abc", notModified: false });
    const fb = toBinary(GetConfigResponseSchema, full);
    expect(fb[0]).toBe(0x0a); // content = 1
    expect(new TextDecoder().decode(field(fb, 2, LEN).body)).toBe("abc"); // hash = 2
    expect(equals(GetConfigResponseSchema, fromBinary(GetConfigResponseSchema, fb), full)).toBe(true);
  });

  test("GetConfigRequest round-trips with the published numbers", () => {
    const msg = create(GetConfigRequestSchema, {
      id: "alloy-1",
      localAttributes: { env: "prod" },
      hash: "h1",
      remoteConfigStatus: { status: RemoteConfigStatuses.RemoteConfigStatuses_FAILED, errorMessage: "bad" },
      effectiveConfig: {
        configMap: { configMap: { "": { body: new Uint8Array([1]), contentType: "text/plain" } } },
      },
    });
    const bytes = toBinary(GetConfigRequestSchema, msg);
    expect(bytes[0]).toBe(0x0a); // id = 1
    expect(new TextDecoder().decode(field(bytes, 3, LEN).body)).toBe("h1"); // hash = 3
    const entry = field(bytes, 4, LEN); // local_attributes = 4 (map entry)
    expect(new TextDecoder().decode(field(entry.body, 1, LEN).body)).toBe("env");
    expect(new TextDecoder().decode(field(entry.body, 2, LEN).body)).toBe("prod");
    expect(field(field(bytes, 5, LEN).body, 1, VARINT).value).toBe(3n); // remote_config_status.status
    field(bytes, 6, LEN); // effective_config
    expect(fields(bytes).some((f) => f.no === 2)).toBe(false); // deprecated attributes unset

    expect(equals(GetConfigRequestSchema, fromBinary(GetConfigRequestSchema, bytes), msg)).toBe(true);
  });

  test("CollectorService methods and idempotency", () => {
    expect(CollectorService.typeName).toBe("collector.v1.CollectorService");
    expect(CollectorService.methods.map((m) => m.name)).toEqual(["GetConfig", "RegisterCollector", "UnregisterCollector"]);
    expect(CollectorService.method.getConfig.idempotency).toBe(MethodOptions_IdempotencyLevel.NO_SIDE_EFFECTS);
    expect(CollectorService.method.registerCollector.idempotency).toBe(MethodOptions_IdempotencyLevel.IDEMPOTENT);
  });
});
