import { describe, expect, test } from "bun:test";
import { block, encodeAlloy } from "../../alloy-syntax.ts";
import { renderOtelcol } from "../../../render/otelcol.ts";
import type { CollectorConfigInput } from "../../render-input.ts";
import type { ValidationError } from "../../../errors.ts";
import { fieldKind, type Schema } from "../../../ui/schema/schema.ts";
import { catalogView, findType } from "../../registry.ts";
import type { OtelcolTarget } from "../../types.ts";
import { validateComponentConfig } from "../../validate.ts";
import { parseCollectorVersion } from "../../versions.ts";

/** Looked up as the API does, so the test also fails when the type is not registered. */
const kafkaSource = findType("source", "kafka")!;

const OUTPUT = block("output", undefined, []);
const at = (version: string): OtelcolTarget => ({ version: parseCollectorVersion(version) });
const SECRET = { secret: "0190a8c2-7b3e-7c41-9d2e-5f6a7b8c9d01" };

function problems(config: unknown): string[] {
  try {
    validateComponentConfig("source", "kafka", config);
    return [];
  } catch (error) {
    return (error as ValidationError).details.map((d) => `${d.path}: ${d.message}`);
  }
}

describe("kafka source", () => {
  test("defaults follow upstream: a topic and encoding per signal, latest offset, group otel-collector", () => {
    const config = validateComponentConfig("source", "kafka", { brokers: ["kafka-1:9092", "kafka-2:9092"] });
    expect(kafkaSource.otelcol(config).config).toEqual({
      brokers: ["kafka-1:9092", "kafka-2:9092"],
      protocol_version: "2.1.0",
      client_id: "otel-collector",
      group_id: "otel-collector",
      initial_offset: "latest",
      logs: { topics: ["otlp_logs"], encoding: "otlp_proto" },
      metrics: { topics: ["otlp_metrics"], encoding: "otlp_proto" },
      traces: { topics: ["otlp_spans"], encoding: "otlp_proto" },
    });
  });

  test("Runtime O writes topic until the collector is known to take topics (v0.142.0)", () => {
    const config = validateComponentConfig("source", "kafka", { brokers: ["k:9092"], logs: { topic: "^app-.*", encoding: "json" } });
    expect(kafkaSource.otelcol(config, at("0.141.9")).config.logs).toEqual({ topic: "^app-.*", encoding: "json" });
    expect(kafkaSource.otelcol(config, at("0.142.0")).config.logs).toEqual({ topics: ["^app-.*"], encoding: "json" });
  });

  test("TLS and SASL: tls only when enabled, the password as the stored secret's value", () => {
    const config = validateComponentConfig("source", "kafka", {
      brokers: ["k:9093"],
      tls: { enabled: true, ca_file: "/etc/ssl/kafka-ca.pem" },
      sasl: { username: "svc", password: SECRET },
    });
    const rendered = kafkaSource.otelcol(config).config;
    expect(rendered.tls).toEqual({ ca_file: "/etc/ssl/kafka-ca.pem" });
    expect(rendered.auth).toEqual({ sasl: { mechanism: "SCRAM-SHA-512", username: "svc", password: SECRET } });
    const alloy = encodeAlloy(kafkaSource.alloy!(config, "k", OUTPUT));
    expect(alloy).toContain('protocol_version = "2.1.0"');
    expect(alloy).toContain('topic    = "otlp_logs"');
    expect(alloy).toContain("tls {");
    expect(alloy).toContain('mechanism = "SCRAM-SHA-512"');
  });

  test("refuses what either runtime would refuse", () => {
    expect(problems({})).toEqual(["config.brokers: expected required property"]);
    expect(problems({ brokers: ["kafka"] })[0]).toContain("must be host:port");
    expect(problems({ brokers: ["k:9092"], logs: { topic: "a topic" } })[0]).toContain("must be a Kafka topic name");
    expect(problems({ brokers: ["k:9092"], metrics: { encoding: "raw" } })[0]).toStartWith("config.metrics.encoding: must be one of 'otlp_proto', 'otlp_json'");
    expect(problems({ brokers: ["k:9092"], protocol_version: "2.1" })[0]).toContain("must be a Kafka version");
    expect(problems({ brokers: ["k:9092"], tls: { insecure_skip_verify: true } })).toEqual([
      "config.tls.enabled: must be true when insecure_skip_verify or ca_file is set",
    ]);
    expect(problems({ brokers: ["k:9092"], sasl: { username: "u" } })[0]).toContain("password");
    expect(problems({ brokers: ["k:9092"], protocol_version: "0.10.2.0", traces: { encoding: "zipkin_thrift" } })).toEqual([]);
  });

  test("what the collector would refuse at start: a ^ topic that is no RE2 regex, a port above 65535; and two signals on one topic", () => {
    expect(problems({ brokers: ["k:9092"], logs: { topic: "^(" } })).toEqual(["config.logs.topic: is not an RE2 pattern: missing closing ')' (at 1)"]);
    expect(problems({ brokers: ["k:9092"], traces: { topic: "^(?=x)" } })).toEqual([
      "config.traces.topic: is not an RE2 pattern: lookahead (?= and (?! is not supported by RE2 (at 1)",
    ]);
    expect(problems({ brokers: ["k:9092", "x:99999", "y:0"] })).toEqual([
      "config.brokers[1]: has port 99999; a port is 1 to 65535",
      "config.brokers[2]: has port 0; a port is 1 to 65535",
    ]);
    expect(problems({ brokers: ["k:9092"], logs: { topic: "t" }, metrics: { topic: "t" }, traces: { topic: "t" } })).toEqual([
      "config.metrics.topic: is also the logs topic; each signal reads its own topic",
      "config.traces.topic: is also the logs topic; each signal reads its own topic",
    ]);
    expect(problems({ brokers: ["k:65535"], logs: { topic: "^app-(a|b)\\..*" }, metrics: { topic: "m" } })).toEqual([]);
  });

  test("a collector known to predate the per-signal keys (v0.124.0) is refused, naming its version", () => {
    const input: CollectorConfigInput = {
      collector: { id: "c", name: "c", version: "0.120.0" },
      sources: new Map([["s", { id: "s", name: "queue", type: "kafka", config: { brokers: ["k:9092"] } }]]),
      destinations: new Map([["d", { id: "d", name: "d", type: "otlp", config: { endpoint: "gw:4317" } }]]),
      pipelines: new Map([
        [
          "p",
          {
            id: "p",
            name: "p",
            signal: "logs" as const,
            topology: {
              nodes: [
                { id: "in", kind: "source" as const },
                { id: "out", kind: "destination" as const, ref: "d" },
              ],
              edges: [{ id: "e", source: "in", target: "out" }],
            },
          },
        ],
      ]),
      activations: {
        collectorId: "c",
        sources: [{ sourceId: "s", configOverrides: {} }],
        destinations: [{ destinationId: "d", configOverrides: {}, tags: {} }],
      },
      routes: [{ id: "r", collectorId: "c", sourceId: "s", pipelineId: "p" }],
    };
    expect(() => renderOtelcol(input)).toThrow("source 'queue': the kafka component needs collector v0.124.0 or later, and the collector reports v0.120.0");
    expect(renderOtelcol({ ...input, collector: { ...input.collector, version: "0.124.0" } })).toContain("kafka/queue:");
    // v0.149.0 refuses the per-signal `topic`, so an unknown version gets `topics`.
    expect(renderOtelcol({ ...input, collector: { ...input.collector, version: null } })).toContain('topics:\n        - "otlp_logs"');
  });

  test("the form shows each field as its kind: signal groups, encoding choices, a stored-secret password", () => {
    const schema = catalogView().sources.find((e) => e.type === "kafka")!.schema as Schema;
    const props = schema.properties!;
    expect(schema.required).toEqual(["brokers"]);
    expect(fieldKind(props.brokers!)).toBe("stringList");
    expect(fieldKind(props.initial_offset!)).toBe("choice");
    expect(fieldKind(props.logs!)).toBe("object");
    expect(fieldKind(props.logs!.properties!.encoding!)).toBe("choice");
    expect(fieldKind(props.tls!)).toBe("object");
    expect(fieldKind(props.sasl!)).toBe("object");
    expect(fieldKind(props.sasl!.properties!.password!)).toBe("secret");
  });
});
