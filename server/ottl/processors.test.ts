import { expect, test } from "bun:test";
import { ValidationError } from "../errors.ts";
import { OttlError } from "./errors.ts";
import { validateProcessor } from "./processors.ts";

function problem(type: string, config: unknown): { error: ValidationError; path: string; message: string } {
  try {
    validateProcessor({ type, config: config as Record<string, unknown> }, "processors[3]");
  } catch (error) {
    if (error instanceof ValidationError) return { error, ...error.details[0]! };
    throw error;
  }
  throw new Error("expected the config to be rejected");
}

test("valid configs come back typed", () => {
  const filter = { error_mode: "propagate", logs: { log_record: ['body == "x"'] }, traces: { span: ["kind == SPAN_KIND_CLIENT"] } };
  expect(validateProcessor({ type: "filter", config: filter })).toEqual({ type: "filter", config: filter } as never);
  expect(validateProcessor({ type: "batch", config: {} }).type).toBe("batch");
  expect(validateProcessor({ type: "batch", config: { send_batch_size: 100, timeout: "1m30s" } }).type).toBe("batch");
  const actions = [
    { key: "a", action: "insert", value: "x" },
    { key: "b", action: "delete" },
  ];
  expect(validateProcessor({ type: "attributes", config: { actions } })).toEqual({ type: "attributes", config: { actions } } as never);
  expect(validateProcessor({ type: "resource", config: { attributes: actions } }).type).toBe("resource");
});

test.each([
  ["routing", {}, "processors[3].type", "unknown processor type 'routing'; the dry-run runs filter, batch, attributes, resource, transform"],
  ["transform", {}, "processors[3].config", "a transform needs at least one statement"],
  [
    "transform",
    { log_statements: [{ context: "span", statements: ["true"] }] },
    "processors[3].config.log_statements[0].context",
    "must be one of 'resource', 'scope', 'log'",
  ],
  [
    "transform",
    { log_statements: [{ context: "log", statements: [] }] },
    "processors[3].config.log_statements[0].statements",
    "must be a list of 1 to 100 statements, each 1 to 4096 characters",
  ],
  [
    "transform",
    { trace_statements: [{ context: "span", statements: ['set(attributes["a"], 1)', "drop()"] }] },
    "processors[3].config.trace_statements[0].statements[1]",
    "column 1: 'drop' is not an editor svc checks; statements can call set, delete_key, delete_matching_keys, keep_keys, keep_matching_keys, limit, truncate_all, merge_maps, replace_pattern, replace_all_patterns, replace_match, replace_all_matches",
  ],
  ["filter", { error_mode: "loud", logs: { log_record: ["true"] } }, "processors[3].config.error_mode", "must be one of 'ignore', 'propagate', 'silent'"],
  ["filter", { logs: { log_records: ["true"] } }, "processors[3].config.logs.log_records", "unexpected property"],
  ["filter", { logs: { log_record: ["true", 5] } }, "processors[3].config.logs.log_record[1]", "expected string"],
  ["filter", { logs: { log_record: [] } }, "processors[3].config", "a filter needs at least one condition"],
  ["filter", {}, "processors[3].config", "a filter needs at least one condition"],
  ["batch", { send_batch_size: 0 }, "processors[3].config.send_batch_size", "expected integer to be greater or equal to 1"],
  ["batch", { timeout: "soon" }, "processors[3].config.timeout", "must be a duration such as 500ms, 10s or 1m30s"],
  ["attributes", { actions: [] }, "processors[3].config.actions", "expected array length to be greater or equal to 1"],
  [
    "attributes",
    { actions: [{ key: "a", action: "rename" }] },
    "processors[3].config.actions[0].action",
    "must be one of 'insert', 'update', 'upsert', 'delete', 'hash'",
  ],
  ["attributes", { actions: [{ key: "", action: "delete" }] }, "processors[3].config.actions[0].key", "expected string length greater or equal to 1"],
  ["attributes", { actions: [{ key: "a", action: "insert", value: [1] }] }, "processors[3].config.actions[0].value", "must be a string, number or boolean"],
  [
    "attributes",
    {
      actions: [
        { key: "a", action: "delete" },
        { key: "b", action: "upsert" },
      ],
    },
    "processors[3].config.actions[1].value",
    "'upsert' needs a value",
  ],
  ["attributes", { actions: [{ key: "a", action: "hash", value: "x" }] }, "processors[3].config.actions[0].value", "'hash' takes no value"],
  ["attributes", { actions: [{ key: "a", action: "delete", from_attribute: "b" }] }, "processors[3].config.actions[0].from_attribute", "unexpected property"],
  ["resource", { actions: [] }, "processors[3].config.attributes", "expected required property"],
])("%s %j is rejected at %s", (type, config, path, message) => {
  const found = problem(type, config);
  expect(found.path).toBe(path);
  expect(found.message.toLowerCase()).toBe(message.toLowerCase());
});

test("every condition is parsed in its own context, and a bad one names its list and column", () => {
  const found = problem("filter", {
    logs: { log_record: ['body == "x"'] },
    metrics: { metric: ['name == "x"'], datapoint: ['metric.name == "x"', "value_int >"] },
  });
  expect(found.error).toBeInstanceOf(OttlError);
  expect(found.path).toBe("processors[3].config.metrics.datapoint[1]");
  expect(found.message).toBe("column 12: expected a value, found the end of the condition");
  expect(problem("filter", { traces: { spanevent: ['body == "x"'] } }).path).toBe("processors[3].config.traces.spanevent[0]");
});
