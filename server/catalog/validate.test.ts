import { describe, expect, test } from "bun:test";
import { ValidationError, type ErrorDetail } from "../errors.ts";
import type { ComponentKind } from "./types.ts";
import { validateComponentConfig } from "./validate.ts";

/** The problems of a config that must fail. */
function problems(kind: ComponentKind, type: string, config: unknown, root?: string): ErrorDetail[] {
  try {
    validateComponentConfig(kind, type, config, root);
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return (error as ValidationError).details;
  }
  throw new Error("expected a ValidationError");
}

const paths = (details: ErrorDetail[]) => details.map((d) => d.path);

describe("defaults", () => {
  test("fill in every defaulted field, nested ones too", () => {
    expect(validateComponentConfig("source", "otlp", {})).toEqual({
      grpc: { enabled: true, endpoint: "localhost:4317" },
      http: { enabled: true, endpoint: "localhost:4318" },
    });
    expect(validateComponentConfig("destination", "otlp", { endpoint: "gw:4317" })).toEqual({
      endpoint: "gw:4317",
      tls: { insecure: false },
      headers: {},
    });
    expect(validateComponentConfig("processor", "batch", {})).toEqual({ send_batch_size: 8192, timeout: "200ms" });
    expect(validateComponentConfig("processor", "filter", { logs: { log_record: ["true"] } })).toEqual({
      error_mode: "ignore",
      logs: { log_record: ["true"] },
    });
  });

  test("keep given values and leave the input untouched", () => {
    const input = { include: ["/a.log"], start_at: "beginning" };
    const out = validateComponentConfig("source", "filelog", input);
    expect(out).toEqual({ include: ["/a.log"], exclude: [], start_at: "beginning" });
    expect(input).toEqual({ include: ["/a.log"], start_at: "beginning" });
  });

  test("leave optional fields without a default out", () => {
    expect(validateComponentConfig("source", "journald", {})).toEqual({ units: [] });
    expect(validateComponentConfig("destination", "loki", { endpoint: "http://loki:3100" })).toEqual({
      endpoint: "http://loki:3100",
      headers: {},
    });
  });
});

describe("bad configs name the key path", () => {
  test("a missing required key", () => {
    expect(paths(problems("destination", "otlphttp", {}))).toEqual(["config.endpoint"]);
  });

  test("a key of the wrong form, with a readable message", () => {
    const [p] = problems("destination", "otlphttp", { endpoint: "otlp.example.com" });
    expect(p).toEqual({ path: "config.endpoint", message: "must be an http:// or https:// URL" });
  });

  test("an unknown key, nested or not", () => {
    expect(paths(problems("destination", "otlp", { endpoint: "x:1", tsl: {} }))).toEqual(["config.tsl"]);
    expect(paths(problems("destination", "otlp", { endpoint: "x:1", tls: { insecure: true, ca: "x" } }))).toEqual([
      "config.tls.ca",
    ]);
  });

  test("an enum value outside its choices", () => {
    const [p] = problems("source", "syslog", { protocol: "rfc9999" });
    expect(p).toEqual({ path: "config.protocol", message: "must be one of 'rfc5424', 'rfc3164'" });
  });

  test("an item of a list", () => {
    expect(paths(problems("source", "prometheus", { targets: ["localhost:9100", "nohost"] }))).toEqual(["config.targets[1]"]);
    expect(paths(problems("source", "hostmetrics", { scrapers: ["cpu", "gpu"] }))).toEqual(["config.scrapers[1]"]);
  });

  test("a zero interval and a bad header name", () => {
    expect(paths(problems("source", "hostmetrics", { collection_interval: "0s" }))).toEqual(["config.collection_interval"]);
    expect(paths(problems("destination", "otlphttp", { endpoint: "http://x", headers: { "bad header": "v" } }))).toEqual([
      "config.headers.bad header",
    ]);
  });

  test("under the root the caller gives", () => {
    expect(paths(problems("processor", "batch", { timeout: "soon" }, "topology.nodes[1].processor.config"))).toEqual([
      "topology.nodes[1].processor.config.timeout",
    ]);
  });

  test("an unknown type names `type`", () => {
    expect(problems("source", "kafka", {})).toEqual([{ path: "type", message: "is not a source type of the catalog" }]);
  });

  test("the message of the error names the first problem", () => {
    expect(() => validateComponentConfig("destination", "otlphttp", {})).toThrow(
      "The otlphttp destination config is not valid: config.endpoint:",
    );
  });
});

describe("type checks beyond the schema", () => {
  test("an OTLP source must listen on something", () => {
    expect(problems("source", "otlp", { grpc: { enabled: false }, http: { enabled: false } })).toEqual([
      { path: "config.grpc.enabled", message: "at least one of grpc and http must be enabled" },
    ]);
  });

  test("attribute actions take a value exactly when they set one", () => {
    const details = problems("processor", "attributes", {
      actions: [
        { key: "a", action: "insert" },
        { key: "b", action: "delete", value: "x" },
        { key: "c", action: "upsert", value: 3 },
      ],
    });
    expect(details).toEqual([
      { path: "config.actions[0].value", message: "'insert' needs a value" },
      { path: "config.actions[1].value", message: "'delete' takes no value" },
    ]);
    expect(paths(problems("processor", "resource", { attributes: [{ key: "k", action: "update" }] }))).toEqual([
      "config.attributes[0].value",
    ]);
  });

  test("a filter needs at least one condition", () => {
    expect(problems("processor", "filter", { logs: { log_record: [] } })).toEqual([
      { path: "config", message: "a filter needs at least one condition" },
    ]);
  });
});

describe("OTTL conditions of the filter", () => {
  test("each condition is parsed in its own context and named by its path", () => {
    const details = problems("processor", "filter", {
      logs: { log_record: ['body == "ok"'] },
      metrics: { datapoint: ["IsMatch(name"], metric: ['name == "up"'] },
      traces: { span: ['attributes["http.route"] == "/healthz"'], spanevent: ["severity_number > 3"] },
    });
    expect(details.map((d) => d.path)).toEqual(["config.metrics.datapoint[0]", "config.traces.spanevent[0]"]);
    expect(details[0]!.message).toMatch(/column \d+/);
  });

  test("a log path is not a span path", () => {
    expect(() => validateComponentConfig("processor", "filter", { logs: { log_record: ["severity_number >= 9"] } })).not.toThrow();
    expect(problems("processor", "filter", { traces: { span: ["severity_number >= 9"] } })[0]!.path).toBe("config.traces.span[0]");
  });
});
