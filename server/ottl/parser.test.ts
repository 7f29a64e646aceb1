import { describe, expect, test } from "bun:test";
import { ValidationError } from "../errors.ts";
import type { Condition, Value } from "./ast.ts";
import { OttlError } from "./errors.ts";
import { checkCondition, parseCondition } from "./parser.ts";

const path = (fields: string, ...keys: (string | bigint)[]): Value => ({ kind: "path", fields: fields.split("."), keys });
const lit = (value: string | bigint | number | boolean | null): Value => ({ kind: "literal", value });
const eq = (left: Value, right: Value): Condition => ({ kind: "compare", op: "==", left, right });

function errorOf(source: string, context: Parameters<typeof parseCondition>[1] = "log"): OttlError {
  try {
    parseCondition(source, context);
  } catch (error) {
    if (error instanceof OttlError) return error;
    throw error;
  }
  throw new Error(`expected ${source} to be rejected`);
}

describe("grammar", () => {
  test("comparisons bind tighter than not, not than and, and than or", () => {
    const a = eq(path("body"), lit("a"));
    const b = eq(path("severity_text"), lit("b"));
    const c = eq(path("attributes", "c"), lit(1n));
    expect(parseCondition('body == "a" or severity_text == "b" and attributes["c"] == 1')).toEqual({
      kind: "or",
      operands: [a, { kind: "and", operands: [b, c] }],
    });
    expect(parseCondition('not body == "a" and severity_text == "b"')).toEqual({
      kind: "and",
      operands: [{ kind: "not", operand: a }, b],
    });
    expect(parseCondition('(body == "a" or severity_text == "b") and attributes["c"] == 1')).toEqual({
      kind: "and",
      operands: [{ kind: "or", operands: [a, b] }, c],
    });
  });

  test("chains of one operator are flat; parentheses keep their own node", () => {
    const t: Condition = { kind: "bool", value: true };
    const f: Condition = { kind: "bool", value: false };
    expect(parseCondition("true or false or true")).toEqual({ kind: "or", operands: [t, f, t] });
    expect(parseCondition("(true or false) or true")).toEqual({ kind: "or", operands: [{ kind: "or", operands: [t, f] }, t] });
    expect(parseCondition("not (not true)")).toEqual({ kind: "not", operand: { kind: "not", operand: t } });
    expect(parseCondition("((true))")).toEqual(t);
  });

  test("every comparison operator", () => {
    for (const op of ["==", "!=", "<", ">", "<=", ">="] as const) {
      expect(parseCondition(`severity_number ${op} 9`)).toEqual({ kind: "compare", op, left: path("severity_number"), right: lit(9n) });
    }
  });

  test("literals: Go string escapes, signed ints and floats, true, false, nil", () => {
    const right = (source: string) => (parseCondition(`body == ${source}`) as { right: Value }).right;
    expect(right(String.raw`"a\"b\\c\n\t\x41\101\u00e9\U0001F600"`)).toEqual(lit('a"b\\c\n\tAAé😀'));
    expect(right(String.raw`"\a\b\f\r\v"`)).toEqual(lit("\x07\b\f\r\v"));
    expect(right('"multi\nline"')).toEqual(lit("multi\nline"));
    expect(right("42")).toEqual(lit(42n));
    expect(right("-42")).toEqual(lit(-42n));
    expect(right("+7")).toEqual(lit(7n));
    expect(right("9223372036854775807")).toEqual(lit(9223372036854775807n));
    expect(right("-9223372036854775808")).toEqual(lit(-9223372036854775808n));
    expect(right("1.5")).toEqual(lit(1.5));
    expect(right(".5")).toEqual(lit(0.5));
    expect(right("-2.5e3")).toEqual(lit(-2500));
    expect(right("1.0E-2")).toEqual(lit(0.01));
    expect(right("true")).toEqual(lit(true));
    expect(right("nil")).toEqual(lit(null));
  });

  test("paths with keys, enums and converters", () => {
    expect(parseCondition('resource.attributes["service.name"] == "api"')).toEqual(eq(path("resource.attributes", "service.name"), lit("api")));
    expect(parseCondition('attributes["a"]["b"][0] != nil')).toMatchObject({ left: path("attributes", "a", "b", 0n) });
    expect(parseCondition('body["msg"] == "x"')).toMatchObject({ left: path("body", "msg") });
    expect(parseCondition("body[0] == 1")).toMatchObject({ left: path("body", 0n) });
    expect(parseCondition("severity_number >= SEVERITY_NUMBER_WARN")).toMatchObject({ right: { kind: "enum", name: "SEVERITY_NUMBER_WARN" } });
    expect(parseCondition('IsMatch(body, "^GET ")')).toEqual({
      kind: "call",
      call: { kind: "call", name: "IsMatch", args: [path("body"), lit("^GET ")] },
    });
    expect(parseCondition("IsString(body) == true")).toMatchObject({ left: { kind: "call", name: "IsString" }, right: lit(true) });
    for (const f of ["IsString", "IsInt", "IsDouble", "IsBool", "IsMap", "IsList"]) {
      expect(parseCondition(`${f}(attributes["x"])`)).toMatchObject({ kind: "call", call: { name: f } });
    }
    expect(parseCondition('  body\t==\n"x"  ')).toEqual(eq(path("body"), lit("x")));
  });

  test("each context knows its own paths and enums", () => {
    expect(() => parseCondition('name == "http.server.duration" and type == METRIC_DATA_TYPE_HISTOGRAM', "metric")).not.toThrow();
    expect(() => parseCondition('metric.name == "x" and value_double > 0.5 and attributes["k"] == "v"', "datapoint")).not.toThrow();
    expect(() => parseCondition("kind == SPAN_KIND_SERVER and status.code == STATUS_CODE_ERROR", "span")).not.toThrow();
    expect(() => parseCondition('name == "exception" and span.name == "GET /" and attributes["k"] != nil', "spanevent")).not.toThrow();
    expect(errorOf('body == "x"', "span").reason).toContain("unknown path 'body' in the span context");
    expect(errorOf("severity_number > SEVERITY_NUMBER_INFO", "metric").reason).toContain("unknown path 'severity_number'");
    expect(errorOf("kind == SEVERITY_NUMBER_INFO", "span").reason).toBe("unknown enum 'SEVERITY_NUMBER_INFO' in the span context");
  });
});

describe("errors name the problem and its 1-based column", () => {
  const cases: [string, number, string][] = [
    ["", 1, "the condition is empty"],
    ["   ", 4, "the condition is empty"],
    ['body = "x"', 6, "'=' is not an operator; compare with '=='"],
    ['body == "x" && true', 13, "use 'and'"],
    ['body == "x" || true', 13, "use 'or'"],
    ['!(body == "x")', 1, "negate with 'not'"],
    ["severity_number + 1 > 3", 17, "arithmetic is not supported"],
    ["body == 'x'", 9, "double quotes"],
    ['body == "x', 9, "the string is not closed"],
    [String.raw`body == "a\qb"`, 11, String.raw`'\q' is not a valid escape`],
    [String.raw`body == "\x4"`, 10, "exactly 2 hex digits"],
    [String.raw`body == "\uD800"`, 10, "not a valid Unicode code point"],
    [String.raw`body == "\400"`, 10, "octal escape"],
    [String.raw`body == "a\\"`, 11, "cannot end with an escaped backslash"],
    ["body == 0x01", 9, "byte literals"],
    ["severity_number == 1and true", 21, "a number must be followed by a space or an operator, not 'a'"],
    ["body == 1e5", 10, "not 'e'"],
    ["body == 99999999999999999999", 9, "out of range for int64"],
    ["body == 1.0e999", 9, "out of range for a double"],
    ["body == {}", 9, "map literals are not supported"],
    ['body == ["a"]', 9, "list literals are not supported"],
    ["foo == 1", 1, "unknown path 'foo' in the log context"],
    ['severityText == "x"', 1, "did you mean severity_text?"],
    ["attributes == nil", 1, 'attributes needs a key, e.g. attributes["key"]'],
    ["attributes[0] == nil", 11, "attributes is indexed by a string key"],
    ['severity_text["x"] == nil', 14, "severity_text takes no [key]"],
    ['attributes["a"].b == 1', 16, "a [key] must come last in a path"],
    ["body", 1, "body is not a condition by itself"],
    ['"x"', 1, '"x" is not a condition'],
    ["nil", 1, "nil is not a condition"],
    ["SEVERITY_NUMBER_INFO", 1, "SEVERITY_NUMBER_INFO is not a condition"],
    ["body == FOO", 9, "unknown enum 'FOO' in the log context"],
    ["body == Foo", 9, "unknown name 'Foo'"],
    ["IsMatch == true", 1, "IsMatch is a function; call it"],
    ['isMatch(body, "x")', 1, "did you mean IsMatch?"],
    ['set(attributes["x"], 1)', 1, "'set' is not a function a condition can call"],
    ["Concat(body)", 1, "unknown function 'Concat'"],
    ["IsMatch(body)", 1, "IsMatch takes 2 arguments (target, pattern), got 1"],
    ["IsString()", 1, "IsString takes 1 argument (value), got 0"],
    ['IsMatch(body, attributes["p"])', 15, "the pattern of IsMatch must be a string literal"],
    ['IsMatch(target = body, "x")', 16, "named arguments are not supported"],
    ['IsMatch(body, "x")["k"]', 19, "indexing the result of a function is not supported"],
    ['IsMatch(body, "a(?=b)")', 17, "lookahead (?= and (?! is not supported by RE2"],
    [String.raw`IsMatch(body, "\\d+\\1")`, 20, String.raw`backreferences (\1) are not supported by RE2`],
    [String.raw`IsMatch(body, "\"(x")`, 18, "missing closing ')'"],
    ["not not true", 5, "'not' cannot follow 'not'"],
    ["1 == 1 == 1", 8, "comparisons cannot be chained"],
    ["(true) == true", 8, "a parenthesized condition cannot be compared"],
    ["(true", 6, "expected ')', found the end of the condition"],
    ["true)", 5, "')' has no matching '('"],
    ["true false", 6, "expected 'and', 'or' or the end of the condition, found 'false'"],
    ["true and", 9, "expected a value, found the end of the condition"],
    ["and true", 1, "expected a condition before 'and'"],
    ["body == ", 9, "expected a value, found the end of the condition"],
    ["body == and", 9, "expected a value, found 'and'"],
    ["body. == 1", 7, "expected a field name after '.'"],
    ["body == 1 §", 11, "unexpected character '§'"],
    ["body == 1 \u0001", 11, "unexpected character U+0001"],
    [`${"(".repeat(101)}true${")".repeat(101)}`, 101, "nest more than 100 deep"],
  ];
  for (const [source, column, reason] of cases) {
    test(JSON.stringify(source).slice(0, 60), () => {
      const error = errorOf(source);
      expect(error.reason).toContain(reason);
      expect(error.column).toBe(column);
    });
  }

  test("an OttlError is a ValidationError (HTTP 400) with the column in its message and detail", () => {
    const error = errorOf("body = 1");
    expect(error).toBeInstanceOf(ValidationError);
    expect(error.status).toBe(400);
    expect(error.message).toBe("condition: column 6: '=' is not an operator; compare with '=='.");
    expect(error.details).toEqual([{ path: "condition", message: "column 6: '=' is not an operator; compare with '=='" }]);
    const moved = error.at("processors[0].config.logs.log_record[2]");
    expect(moved.column).toBe(6);
    expect(moved.details[0]!.path).toBe("processors[0].config.logs.log_record[2]");
  });

  test("the leftmost problem is the one reported, lexical or not", () => {
    expect(errorOf('foo bar = "x').column).toBe(1);
    expect(errorOf('body == 1 or x = "unclosed').column).toBe(14);
  });
});

test("checkCondition gives the catalog's hook a sentence or null", () => {
  expect(checkCondition('IsMatch(body, "/healthz")', "log")).toBeNull();
  expect(checkCondition("body == ", "log")).toBe("column 9: expected a value, found the end of the condition");
  expect(checkCondition('name == "x"', "metric")).toBeNull();
  expect(checkCondition('name == "x"', "log")).toStartWith("column 1: unknown path 'name'");
});
