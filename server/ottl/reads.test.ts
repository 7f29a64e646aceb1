import { expect, test } from "bun:test";
import { logFieldsRead, statementFieldsRead } from "./reads.ts";

test("every path a condition names, in comparisons, converter arguments and under not/and/or, each once", () => {
  const reads = logFieldsRead(
    'not (severity_number < SEVERITY_NUMBER_WARN) and (IsMatch(body["MESSAGE"], "x") or attributes["a"]["b"] == resource.attributes["host.name"]) or attributes["a"]["b"] == 1 or body[0] == nil',
  );
  expect(reads).toEqual([
    { field: "severity_number", text: "severity_number" },
    { field: "body", key: "MESSAGE", text: 'body["MESSAGE"]' },
    { field: "attributes", key: "a", text: 'attributes["a"]["b"]' },
    { field: "resource.attributes", key: "host.name", text: 'resource.attributes["host.name"]' },
    { field: "body", text: "body[0]" },
  ]);
});

test("a condition without paths reads nothing", () => {
  expect(logFieldsRead("true")).toEqual([]);
  expect(logFieldsRead('IsMatch("abc", "b")')).toEqual([]);
});

test("a transform statement reads its target, its value paths and its where condition, named as the log context names them", () => {
  expect(statementFieldsRead('set(attributes["env"], resource.attributes["deployment.environment"]) where body != nil', "log")).toEqual([
    { field: "attributes", key: "env", text: 'attributes["env"]' },
    { field: "resource.attributes", key: "deployment.environment", text: 'resource.attributes["deployment.environment"]' },
    { field: "body", text: "body" },
  ]);
  expect(statementFieldsRead('keep_keys(attributes, ["a"])', "resource")).toEqual([{ field: "resource.attributes", text: "resource.attributes" }]);
  expect(statementFieldsRead('set(name, "x") where attributes["k"] == "v"', "scope")).toEqual([
    { field: "instrumentation_scope.name", text: "instrumentation_scope.name" },
    { field: "instrumentation_scope.attributes", key: "k", text: 'instrumentation_scope.attributes["k"]' },
  ]);
});
