/**
 * Damaged and hostile protobuf over the real collector endpoints: OpAMP over
 * HTTP and WebSocket, OTLP /v1/metrics, Connect remote config. Random bytes,
 * truncation, flipped bytes, wrong wire types, lengths that lie, and values
 * nested tens of thousands deep: a clear 4xx (or a protocol error on the
 * socket), never a 500, never a crash, memory bounded.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { create, toBinary } from "@bufbuild/protobuf";
import fc from "fast-check";
import { GetConfigRequestSchema } from "../../server/gen/collector/v1/collector_pb.ts";
import { AgentToServerSchema } from "../../server/gen/opamp/v1/opamp_pb.ts";
import { ExportMetricsServiceRequestSchema } from "../../server/gen/opentelemetry/proto/collector/metrics/v1/metrics_service_pb.ts";
import { startTestServer, type TestServer } from "../harness.ts";
import { CAPS, description, uuidBytes } from "../opamp/helpers.ts";
import { concat, damaged, deepArray, deepKvlist, keyValue, ld, statusMessage, varint } from "./protowire.ts";

const RUNS = 150;
const MiB = 1024 * 1024;

let server: TestServer;
let opampToken: string;
let otlpToken: string;
let collectorId: string;
let rcfgToken: string;

beforeAll(async () => {
  server = await startTestServer();
  const opampId = (await server.call<{ id: string }>("/collectors", "POST", { name: "fuzz-opamp" })).id;
  // One collector token serves OpAMP and /v1/metrics; minting another would revoke it.
  opampToken = otlpToken = (await server.app.collectorTokens.mint({ actor: "test", remoteAddr: null }, opampId)).token;
  collectorId = (await server.call<{ id: string }>("/collectors", "POST", { name: "fuzz-rcfg", managementMode: "rcfg-remotecfg" })).id;
  rcfgToken = (await server.call<{ token: string }>(`/collectors/${collectorId}/otlp-token`, "POST")).token;
});
afterAll(() => server?.stop());

interface Endpoint {
  name: string;
  path: string;
  contentType: string;
  token: () => string;
  sample: Uint8Array;
  /** Builds a request body whose deepest value nests `depth` levels. */
  deep: (value: Uint8Array) => Uint8Array;
}

const a2s = toBinary(
  AgentToServerSchema,
  create(AgentToServerSchema, {
    instanceUid: uuidBytes(),
    sequenceNum: 1n,
    capabilities: CAPS,
    agentDescription: description({ "service.name": "otelcol", "host.name": "h" }),
  }),
);
const metrics = toBinary(
  ExportMetricsServiceRequestSchema,
  create(ExportMetricsServiceRequestSchema, {
    resourceMetrics: [
      {
        scopeMetrics: [
          {
            metrics: [
              {
                name: "otelcol_receiver_accepted_log_records",
                data: { case: "sum", value: { dataPoints: [{ value: { case: "asDouble", value: 1 }, timeUnixNano: 2_000_000_000n }] } },
              },
            ],
          },
        ],
      },
    ],
  }),
);

const endpoints = (): Endpoint[] => [
  {
    name: "OpAMP over HTTP",
    path: "/v1/opamp",
    contentType: "application/x-protobuf",
    token: () => opampToken,
    sample: a2s,
    // AgentToServer{instance_uid(1), agent_description(3){identifying_attributes(1): KeyValue}}
    deep: (value) => concat(ld(1, uuidBytes()), ld(3, ld(1, keyValue("service.name", value)))),
  },
  {
    name: "OTLP /v1/metrics",
    path: "/v1/metrics",
    contentType: "application/x-protobuf",
    token: () => otlpToken,
    sample: metrics,
    // ExportMetricsServiceRequest{resource_metrics(1){resource(1){attributes(1): KeyValue}}}
    deep: (value) => ld(1, ld(1, ld(1, keyValue("service.name", value)))),
  },
  {
    name: "remote config (Connect, binary)",
    path: "/collector.v1.CollectorService/GetConfig",
    contentType: "application/proto",
    token: () => rcfgToken,
    sample: toBinary(GetConfigRequestSchema, create(GetConfigRequestSchema, { id: collectorId, localAttributes: { env: "prod" } })),
    // GetConfigRequest has no recursive type: the deep value rides in unknown field 9, which the decoder must skip.
    deep: (value) => concat(ld(1, new TextEncoder().encode(collectorId)), ld(9, value)),
  },
];

/** The answer's status and, for a failure, its message: the shared JSON shape, Connect's {code, message}, or OTLP's protobuf Status. */
async function post(endpoint: Endpoint, body: Uint8Array): Promise<{ status: number; message: string | null }> {
  const res = await fetch(`${server.base}${endpoint.path}`, {
    method: "POST",
    headers: { "Content-Type": endpoint.contentType, Authorization: `Bearer ${endpoint.token()}` },
    body: body as Bun.BodyInit,
  });
  const bytes = new Uint8Array(await res.arrayBuffer());
  if (res.status < 400) return { status: res.status, message: null };
  if (res.headers.get("content-type") === "application/x-protobuf") return { status: res.status, message: statusMessage(bytes) };
  try {
    const parsed = JSON.parse(new TextDecoder().decode(bytes)) as { error?: { message?: string }; message?: string };
    return { status: res.status, message: parsed.error?.message ?? parsed.message ?? null };
  } catch {
    return { status: res.status, message: null };
  }
}

/** A refusal is a 4xx that says what went wrong. */
function assertClear(endpoint: Endpoint, body: Uint8Array, answer: { status: number; message: string | null }): void {
  const where = `${endpoint.name} with ${Buffer.from(body.subarray(0, 64)).toString("hex")} (${body.length} bytes)`;
  if (answer.status >= 500) throw new Error(`${where} → ${answer.status} ${answer.message}`);
  if (answer.status >= 400 && !answer.message) throw new Error(`${where} → ${answer.status} without a message`);
}

test("damaged protobuf on every collector endpoint: a clear 4xx or a normal answer, never a 500", async () => {
  for (const endpoint of endpoints()) {
    expect({ endpoint: endpoint.name, status: (await post(endpoint, endpoint.sample)).status }).toEqual({ endpoint: endpoint.name, status: 200 });
    await fc.assert(
      fc.asyncProperty(damaged(endpoint.sample), async (body) => {
        assertClear(endpoint, body, await post(endpoint, body));
      }),
      { numRuns: RUNS },
    );
  }
}, 60_000);

test("values nested up to 200,000 deep: answered without a 500, memory bounded", async () => {
  const before = process.memoryUsage().rss;
  const statuses: string[] = [];
  for (const endpoint of endpoints()) {
    for (const [kind, build] of [
      ["kvlist", deepKvlist],
      ["array", deepArray],
    ] as const) {
      for (const depth of [1_000, 10_000, 200_000]) {
        const body = endpoint.deep(build(depth));
        if (body.length > 4 * MiB) continue;
        const answer = await post(endpoint, body);
        assertClear(endpoint, body, answer);
        statuses.push(`${endpoint.name} ${kind} ${depth}: ${answer.status}`);
      }
    }
  }
  Bun.gc(true);
  const grown = process.memoryUsage().rss - before;
  expect(grown).toBeLessThan(200 * MiB);
  expect(statuses.length).toBeGreaterThan(10);
}, 60_000);

test("OpAMP over WebSocket: damaged frames close the socket or are answered, and the server keeps serving", async () => {
  const url = `${server.base.replace("http", "ws")}/v1/opamp`;
  const frames = fc.sample(damaged(a2s), { numRuns: 20, seed: 11 });
  frames.push(
    concat(Uint8Array.of(0), endpoints()[0]!.deep(deepKvlist(100_000))),
    Uint8Array.of(0xff, 1, 2),
    Uint8Array.of(0, 0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f),
  );
  for (const frame of frames) {
    const outcome = await new Promise<string>((resolve) => {
      const ws = new WebSocket(url, { headers: { Authorization: `Bearer ${opampToken}` } } as unknown as string[]);
      ws.binaryType = "arraybuffer";
      ws.onopen = () => ws.send(frame);
      ws.onmessage = () => (ws.close(), resolve("answered"));
      ws.onclose = (event) => resolve(`closed ${event.code}`);
      ws.onerror = () => resolve("error");
      setTimeout(() => (ws.close(), resolve("quiet")), 1_000);
    });
    expect(outcome).not.toBe("closed 1011");
  }
  expect((await post(endpoints()[0]!, a2s)).status).toBe(200);
}, 60_000);

test("a length prefix claiming 4 GiB is refused at once", async () => {
  for (const endpoint of endpoints()) {
    const body = concat(endpoint.sample, varint((1 << 3) | 2), varint(0xffffffff), Uint8Array.of(1, 2, 3));
    const answer = await post(endpoint, body);
    assertClear(endpoint, body, answer);
    expect(answer.status).toBe(400);
  }
});
