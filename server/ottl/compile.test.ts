import { describe, expect, test } from "bun:test";
import { compileCondition, type LogView } from "./compile.ts";
import { OttlEvalError } from "./errors.ts";
import type { AnyValue, LogRecord } from "./otlp.ts";

const record: LogRecord = {
  body: { stringValue: "GET /api/users HTTP/1.1" },
  severityText: "WARN",
  severityNumber: 13,
  timeUnixNano: "1700000000123456789",
  observedTimeUnixNano: 5,
  flags: 1,
  droppedAttributesCount: 2,
  traceId: "5B8EFFF798038103D269B633813FC60C",
  spanId: "eee19b7ec3c1b174",
  attributes: [
    { key: "http.status_code", value: { intValue: "503" } },
    { key: "http.method", value: { stringValue: "GET" } },
    { key: "ratio", value: { doubleValue: 0.25 } },
    { key: "cached", value: { boolValue: false } },
    { key: "empty" },
    { key: "big", value: { intValue: "9223372036854775807" } },
    { key: "tags", value: { arrayValue: { values: [{ stringValue: "a" }, { stringValue: "b" }] } } },
    {
      key: "req",
      value: {
        kvlistValue: {
          values: [
            { key: "path", value: { stringValue: "/x" } },
            { key: "n", value: { intValue: 2 } },
          ],
        },
      },
    },
    { key: "id", value: { bytesValue: "3q2+7w==" } },
  ],
};

const view: LogView = {
  log: record,
  scope: { name: "my.lib", version: "1.2.0", attributes: [{ key: "s", value: { stringValue: "v" } }] },
  resource: { attributes: [{ key: "service.name", value: { stringValue: "checkout" } }] },
};

const run = (source: string, v: LogView = view) => compileCondition(source)(v);
const withBody = (body: AnyValue | undefined): LogView => ({ log: { body }, scope: undefined, resource: undefined });

describe("paths read the OTLP JSON in place", () => {
  test.each([
    ['body == "GET /api/users HTTP/1.1"', true],
    ['severity_text == "WARN"', true],
    ["severity_number == 13", true],
    ["severity_number >= SEVERITY_NUMBER_WARN and severity_number < SEVERITY_NUMBER_ERROR", true],
    ['attributes["http.method"] == "GET"', true],
    ['attributes["http.status_code"] == 503', true],
    ['attributes["http.status_code"] >= 500.0', true],
    ['attributes["ratio"] < 0.5', true],
    ['attributes["cached"] == false', true],
    ['attributes["big"] == 9223372036854775807', true],
    ['attributes["big"] > 9223372036854775806', true],
    ['attributes["tags"][1] == "b"', true],
    ['attributes["req"]["path"] == "/x"', true],
    ['attributes["req"]["n"] == 2', true],
    ['attributes["req"]["missing"] == nil', true],
    ['resource.attributes["service.name"] == "checkout"', true],
    ['instrumentation_scope.name == "my.lib" and instrumentation_scope.version == "1.2.0"', true],
    ['instrumentation_scope.attributes["s"] == "v"', true],
    ["time_unix_nano == 1700000000123456789 and time_unix_nano > 1700000000123456788", true],
    ["observed_time_unix_nano == 5", true],
    ["flags == 1 and dropped_attributes_count == 2", true],
    ['trace_id.string == "5b8efff798038103d269b633813fc60c" and span_id.string == "eee19b7ec3c1b174"', true],
  ] as const)("%s", (source, expected) => {
    expect(run(source)).toBe(expected);
  });

  test("absent fields read as the collector's defaults", () => {
    const bare: LogView = { log: {}, scope: undefined, resource: undefined };
    expect(run('severity_text == ""', bare)).toBe(true);
    expect(run("severity_number == 0", bare)).toBe(true);
    expect(run("body == nil", bare)).toBe(true);
    expect(run('attributes["x"] == nil', bare)).toBe(true);
    expect(run('resource.attributes["x"] == nil', bare)).toBe(true);
    expect(run('instrumentation_scope.name == ""', bare)).toBe(true);
    expect(run("time_unix_nano == 0 and observed_time_unix_nano == 0 and flags == 0 and dropped_attributes_count == 0", bare)).toBe(true);
    expect(run('trace_id.string == "00000000000000000000000000000000" and span_id.string == "0000000000000000"', bare)).toBe(true);
  });

  test("severityNumber may be the enum name", () => {
    expect(run("severity_number == SEVERITY_NUMBER_ERROR", { log: { severityNumber: "SEVERITY_NUMBER_ERROR" }, scope: undefined, resource: undefined })).toBe(
      true,
    );
  });
});

describe("OTTL comparison semantics", () => {
  test("a missing attribute, or one with no value, is nil", () => {
    expect(run('attributes["nope"] == nil')).toBe(true);
    expect(run('attributes["nope"] != nil')).toBe(false);
    expect(run('attributes["empty"] == nil')).toBe(true);
    expect(run('attributes["nope"] == ""')).toBe(false);
    expect(run('attributes["nope"] != "x"')).toBe(true);
  });

  test("different types: == is false, != is true, order is false", () => {
    expect(run('attributes["http.status_code"] == "503"')).toBe(false);
    expect(run('attributes["http.status_code"] != "503"')).toBe(true);
    expect(run('attributes["http.method"] == 1')).toBe(false);
    expect(run('attributes["http.method"] != 1')).toBe(true);
    expect(run('attributes["http.method"] > 1')).toBe(false);
    expect(run('attributes["http.method"] < 1')).toBe(false);
    expect(run('attributes["cached"] == "false"')).toBe(false);
    expect(run('attributes["cached"] != nil')).toBe(true);
  });

  test("literals on either side; strings order by bytes", () => {
    expect(run('"GET" == attributes["http.method"]')).toBe(true);
    expect(run('"A" < attributes["http.method"]')).toBe(true);
    expect(run('attributes["http.method"] <= "GET"')).toBe(true);
    expect(run("1 < 2 and 2.5 >= 2 and nil == nil and true != false")).toBe(true);
  });

  test("and, or, not short-circuit like the collector", () => {
    expect(run('body == "x" or severity_text == "WARN"')).toBe(true);
    expect(run('severity_text == "WARN" and not (body == "x")')).toBe(true);
    expect(run("false and true or true")).toBe(true);
    expect(run("false and (true or true)")).toBe(false);
    expect(run('true or body["k"] == 1')).toBe(true);
    expect(run('false and body["k"] == 1')).toBe(false);
    expect(run("true and true and false")).toBe(false);
    expect(run("false or false or true")).toBe(true);
  });
});

describe("converters", () => {
  test("IsMatch matches strings anywhere, RE2 style", () => {
    expect(run('IsMatch(body, "^GET /api")')).toBe(true);
    expect(run('IsMatch(body, "users")')).toBe(true);
    expect(run('IsMatch(body, "^users")')).toBe(false);
    expect(run('IsMatch(attributes["http.method"], "(?i)^get$")')).toBe(true);
    expect(run('IsMatch(attributes["nope"], ".*")')).toBe(false);
    expect(run('IsMatch(body, "zzz") == false')).toBe(true);
    expect(run('IsMatch("literal text", "text$")')).toBe(true);
  });

  test("IsMatch sees non-strings as the collector's StringLikeGetter does", () => {
    expect(run('IsMatch(attributes["http.status_code"], "^5")')).toBe(true);
    expect(run('IsMatch(attributes["cached"], "^false$")')).toBe(true);
    expect(run('IsMatch(attributes["ratio"], "^0\\\\.25$")')).toBe(true);
    expect(run('IsMatch(attributes["tags"], "^\\\\[\\"a\\",\\"b\\"\\\\]$")')).toBe(true);
    expect(run('IsMatch(attributes["req"], "\\"path\\":\\"/x\\"")')).toBe(true);
    expect(run('IsMatch(attributes["id"], "^deadbeef$")')).toBe(true);
    expect(run('IsMatch(attributes["empty"], ".*")')).toBe(false);
    expect(run('IsMatch(IsString(body), "true")')).toBe(true);
    expect(run('IsMatch(severity_number, "^13$")')).toBe(true);
    expect(() => run('IsMatch(body, "x")', withBody({ doubleValue: "NaN" }))).toThrow(OttlEvalError);
  });

  test("type predicates", () => {
    expect(run('IsString(body) and IsString(attributes["http.method"]) and IsString(severity_text)')).toBe(true);
    expect(run('IsInt(attributes["http.status_code"]) and IsInt(severity_number) and IsInt(5)')).toBe(true);
    expect(run('IsDouble(attributes["ratio"]) and IsDouble(1.0) and not IsDouble(1)')).toBe(true);
    expect(run('IsBool(attributes["cached"]) and IsBool(IsMap(body)) and IsBool(true)')).toBe(true);
    expect(run('IsMap(attributes["req"]) and IsList(attributes["tags"])')).toBe(true);
    expect(run('IsString(attributes["nope"]) or IsInt(attributes["empty"]) or IsString(nil)')).toBe(false);
    expect(run('IsString("x") == true and IsMap(body) != true')).toBe(true);
  });
});

describe("records a condition cannot be evaluated on throw OttlEvalError", () => {
  test.each([
    ['body["k"] == 1', withBody({ stringValue: "text" }), "a string value cannot be indexed"],
    ['body["k"] == 1', withBody(undefined), "a nil value cannot be indexed"],
    ["body[0] == 1", withBody({ kvlistValue: { values: [] } }), "a map must be indexed by a string"],
    ['body["k"] == 1', withBody({ arrayValue: { values: [] } }), "a list must be indexed by an int"],
    ["body[3] == 1", withBody({ arrayValue: { values: [] } }), "index 3 is out of bounds"],
  ] as const)("%s", (source, v, message) => {
    expect(() => run(source, v)).toThrow(new OttlEvalError(message));
  });

  test("a missing map key is nil, not an error, however deep the path", () => {
    expect(run('body["a"]["b"][0] == nil', withBody({ kvlistValue: { values: [] } }))).toBe(true);
    expect(run('attributes["nope"]["b"] == nil')).toBe(true);
  });
});

test("compileCondition throws the parse error, never a compiled closure, for bad text", () => {
  expect(() => compileCondition("body ==")).toThrow("column 8");
});
