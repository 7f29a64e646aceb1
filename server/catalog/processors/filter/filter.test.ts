import { describe, expect, test } from "bun:test";
import { findType } from "../../registry.ts";
import { validateComponentConfig } from "../../validate.ts";
import { parseCollectorVersion, UNKNOWN_TARGET } from "../../versions.ts";

/** Looked up as the API does, so the test also fails when the type is not registered. */
const filterProcessor = findType("processor", "filter")!;

const at = (version: string) => ({ version: parseCollectorVersion(version) });

/** Validating `config` must fail with exactly these problems. */
const refused = (config: unknown, details: unknown[]) =>
  expect(() => validateComponentConfig("processor", "filter", config)).toThrow(expect.objectContaining({ name: "ValidationError", details }));

test("a filter needs at least one condition", () => {
  refused({ logs: { log_record: [] } }, [{ path: "config", message: "a filter needs at least one condition" }]);
});

describe("OTTL conditions of the filter", () => {
  test("each condition is parsed in its own context and named by its path", () => {
    refused(
      {
        logs: { log_record: ['body == "ok"'] },
        metrics: { datapoint: ["IsMatch(name"], metric: ['name == "up"'] },
        traces: { span: ['attributes["http.route"] == "/healthz"'], spanevent: ["severity_number > 3"] },
      },
      [
        { path: "config.metrics.datapoint[0]", message: expect.stringMatching(/column \d+/) },
        { path: "config.traces.spanevent[0]", message: expect.any(String) },
      ],
    );
  });

  test("a log path is not a span path", () => {
    expect(() => validateComponentConfig("processor", "filter", { logs: { log_record: ["severity_number >= 9"] } })).not.toThrow();
    refused({ traces: { span: ["severity_number >= 9"] } }, [{ path: "config.traces.span[0]", message: expect.any(String) }]);
  });
});

describe("filter keys by collector version", () => {
  const config = validateComponentConfig("processor", "filter", { metrics: { metric: ['name == "a"'], datapoint: ["value_int < 0"] } });

  test("before 0.146.0, or unknown, the deprecated groups every version accepts", () => {
    for (const target of [UNKNOWN_TARGET, at("0.145.9"), at("9.3.1")]) {
      expect(filterProcessor.otelcol(config, "metrics", target).config).toEqual({
        error_mode: "ignore",
        metrics: { metric: ['name == "a"'], datapoint: ["value_int < 0"] },
      });
    }
  });

  test("from 0.146.0 the *_conditions key with each list under its explicit context", () => {
    expect(filterProcessor.otelcol(config, "metrics", at("0.146.0")).config).toEqual({
      error_mode: "ignore",
      metric_conditions: [
        { context: "metric", conditions: ['name == "a"'] },
        { context: "datapoint", conditions: ["value_int < 0"] },
      ],
    });
    const logs = validateComponentConfig("processor", "filter", { logs: { log_record: ["true"] } });
    expect(filterProcessor.otelcol(logs, "logs", at("v0.159.0")).config).toEqual({
      error_mode: "ignore",
      log_conditions: [{ context: "log", conditions: ["true"] }],
    });
  });

  test("conditions for another signal are problems of the pipeline's signal, named by key", () => {
    expect(filterProcessor.checkSignal!(config as never, "logs", "config")).toEqual([
      {
        path: "config.metrics",
        message: "holds metrics conditions, which never run in a logs pipeline; use logs conditions or move them to a metrics pipeline",
      },
    ]);
    expect(filterProcessor.checkSignal!(config as never, "metrics", "config")).toEqual([]);
  });
});
