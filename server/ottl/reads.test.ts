import { expect, test } from "bun:test";
import { logFieldsRead } from "./reads.ts";

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
