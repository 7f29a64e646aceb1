import { describe, expect, test } from "bun:test";
import { findType } from "../../registry.ts";
import { validateComponentConfig } from "../../validate.ts";
import { block, encodeAlloy } from "../../alloy-syntax.ts";
import { UNKNOWN_TARGET } from "../../versions.ts";

/** Looked up as the API does, so the test also fails when the type is not registered. */
const transformProcessor = findType("processor", "transform")!;

const refused = (config: unknown, details: unknown[]) =>
  expect(() => validateComponentConfig("processor", "transform", config)).toThrow(expect.objectContaining({ name: "ValidationError", details }));

const LOGS = {
  log_statements: [
    { context: "resource", statements: ['set(attributes["deployment.environment"], "prod") where attributes["deployment.environment"] == nil'] },
    { context: "log", statements: ['replace_pattern(body, "password=\\\\S+", "password=***")', 'keep_keys(attributes, ["http.route"])'] },
  ],
};

describe("the transform's statements", () => {
  test("a valid config gets error_mode ignore, as the filter's", () => {
    expect(validateComponentConfig("processor", "transform", LOGS)).toEqual({ error_mode: "ignore", ...LOGS });
  });

  test("every bad statement is a problem naming its key path and column, all at once", () => {
    refused(
      {
        log_statements: [{ context: "log", statements: ['set(attributes["a"], "b")', 'set(attributes["a"] "b")', 'delete_key(body, "x") where'] }],
        trace_statements: [{ context: "spanevent", statements: ['set(severity_text, "x")'] }],
      },
      [
        { path: "config.log_statements[0].statements[1]", message: "column 21: expected ')', found a string" },
        { path: "config.log_statements[0].statements[2]", message: "column 28: 'where' needs a condition after it" },
        {
          path: "config.trace_statements[0].statements[0]",
          message: expect.stringMatching(/^column 5: unknown path 'severity_text' in the spanevent context/),
        },
      ],
    );
  });

  test("each context checks its own paths: resource attributes are `attributes` there, scope has its name", () => {
    expect(() =>
      validateComponentConfig("processor", "transform", {
        metric_statements: [
          { context: "resource", statements: ['delete_key(attributes, "k8s.pod.uid")'] },
          { context: "scope", statements: ['set(version, "1")'] },
          { context: "datapoint", statements: ["truncate_all(attributes, 64)"] },
        ],
      }),
    ).not.toThrow();
    refused({ log_statements: [{ context: "resource", statements: ['set(body, "x")'] }] }, [
      { path: "config.log_statements[0].statements[0]", message: expect.stringMatching(/^column 5: unknown path 'body' in the resource context/) },
    ]);
    refused({ log_statements: [{ context: "log", statements: ['delete_key(severity_text, "x")'] }] }, [
      {
        path: "config.log_statements[0].statements[0]",
        message: "column 12: the target of delete_key must be a map, such as attributes; severity_text is not one",
      },
    ]);
  });

  test("a context of another signal, an empty transform and an attribute reference are refused by the schema", () => {
    refused({ log_statements: [{ context: "span", statements: ["true"] }] }, [expect.objectContaining({ path: "config.log_statements[0].context" })]);
    refused({}, [{ path: "config", message: "a transform needs at least one statement" }]);
    expect(() =>
      validateComponentConfig("processor", "transform", { log_statements: [{ context: "log", statements: ['set(attributes["h"], "{{attr "host"}}")'] }] }),
    ).toThrow(/OTTL code/);
  });

  test("statements past the bounds are refused before any is parsed", () => {
    refused({ log_statements: [{ context: "log", statements: Array.from({ length: 101 }, () => 'delete_key(attributes, "a")') }] }, [
      { path: "config.log_statements[0].statements", message: "must be a list of 1 to 100 statements, each 1 to 4096 characters" },
    ]);
    refused({ log_statements: [{ context: "log", statements: ["x".repeat(4097)] }] }, [
      expect.objectContaining({ path: "config.log_statements[0].statements[0]" }),
    ]);
  });
});

describe("rendering", () => {
  const config = validateComponentConfig("processor", "transform", {
    ...LOGS,
    trace_statements: [{ context: "span", statements: ['delete_key(attributes, "db.statement")'] }],
  });

  test("Runtime O: `transform` with error_mode and only the pipeline's signal's groups, in the structured form", () => {
    expect(transformProcessor.otelcol(config, "logs", UNKNOWN_TARGET)).toEqual({
      type: "transform",
      config: { error_mode: "ignore", log_statements: LOGS.log_statements },
    });
    expect(transformProcessor.otelcol(config, "traces", UNKNOWN_TARGET).config).toEqual({
      error_mode: "ignore",
      trace_statements: [{ context: "span", statements: ['delete_key(attributes, "db.statement")'] }],
    });
  });

  test("Runtime R: otelcol.processor.transform with one block per group, statements as raw strings", () => {
    const text = encodeAlloy([transformProcessor.alloy(config, "t", "logs", block("output", undefined, []))]);
    expect(text).toContain('otelcol.processor.transform "t" {');
    expect(text).toContain('log_statements {\n\t\tcontext    = "resource"');
    expect(text).toContain('`replace_pattern(body, "password=\\\\S+", "password=***")`');
    expect(text).not.toContain("trace_statements");
  });

  test("groups for another signal are a problem of the pipeline, named by key", () => {
    expect(transformProcessor.checkSignal!(config as never, "logs", "config")).toEqual([
      {
        path: "config.trace_statements",
        message: "holds trace_statements, which never run in a logs pipeline; use log_statements or move them to a pipeline of their signal",
      },
    ]);
    expect(transformProcessor.checkSignal!(validateComponentConfig("processor", "transform", LOGS) as never, "logs", "config")).toEqual([]);
  });
});
