import { describe, expect, test } from "bun:test";
import { create, toBinary } from "@bufbuild/protobuf";
import { ExportMetricsServiceRequestSchema } from "../gen/opentelemetry/proto/collector/metrics/v1/metrics_service_pb.ts";
import { ValidationError } from "../errors.ts";
import { ingestMessage, ingestProtobuf } from "./intake.ts";
import { ThroughputWindow } from "./window.ts";

const str = (key: string, value: string) => ({ key, value: { value: { case: "stringValue" as const, value } } });

function request(seconds: number, accepted: number, extra = false) {
  return create(ExportMetricsServiceRequestSchema, {
    resourceMetrics: [
      {
        resource: { attributes: [str("service.name", "otelcol")] },
        scopeMetrics: [
          {
            metrics: [
              ...(extra
                ? [
                    {
                      name: "otelcol_exporter_queue_size",
                      data: { case: "gauge" as const, value: { dataPoints: [{ value: { case: "asInt" as const, value: 3n } }] } },
                    },
                  ]
                : []),
              {
                name: "otelcol_receiver_accepted_spans",
                data: {
                  case: "sum" as const,
                  value: {
                    // Temporality after the points: the reader must still see it.
                    dataPoints: [
                      {
                        attributes: [str("receiver", "otlp/ünïcode"), str("transport", "grpc")],
                        startTimeUnixNano: 1_000_000_000n,
                        timeUnixNano: BigInt(seconds) * 1_000_000_000n,
                        value: { case: "asInt" as const, value: BigInt(accepted) },
                      },
                    ],
                    aggregationTemporality: 1,
                    isMonotonic: true,
                  },
                },
              },
            ],
          },
        ],
      },
    ],
  });
}

describe("protobuf wire reader", () => {
  test("reads the same points as the generated decoder", () => {
    const viaWire = new ThroughputWindow();
    const viaMessage = new ThroughputWindow();
    for (const [s, v] of [
      [1000, 100],
      [1010, 200],
    ] as const) {
      expect(ingestProtobuf(viaWire, "c", toBinary(ExportMetricsServiceRequestSchema, request(s, v, true)))).toEqual({ rejected: 0, message: "" });
      ingestMessage(viaMessage, "c", request(s, v, true));
    }
    const a = viaWire.rates("c")!;
    const b = viaMessage.rates("c")!;
    expect(a.components).toEqual(b.components);
    // DELTA: 200 over the 10 s since the first point.
    expect(a.components).toEqual([{ id: "otlp/ünïcode", kind: "receiver", signal: "traces", in: 20, out: 20, errors: null }]);
  });

  test("malformed bodies are 400 and change nothing", () => {
    const w = new ThroughputWindow();
    const good = toBinary(ExportMetricsServiceRequestSchema, request(1000, 5));
    for (const bad of [good.subarray(0, good.length - 3), new Uint8Array([0x0a, 0x7f, 0x01]), new Uint8Array([0x0b]), new Uint8Array([0xff, 0xff, 0xff])]) {
      let thrown: unknown;
      try {
        ingestProtobuf(w, "c", bad);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(ValidationError);
      expect((thrown as ValidationError).status).toBe(400);
    }
    expect(w.rates("c")).toBeNull();
  });
});
