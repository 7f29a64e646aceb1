/**
 * Property tests with a small seeded generator (mulberry32), so a failure
 * names its seed and replays exactly: printing round-trips, hostile text
 * only ever raises the typed errors, and the compiled evaluator agrees with
 * a plain tree-walking interpreter of the same semantics.
 */
import { describe, expect, test } from "bun:test";
import { ValidationError } from "../errors.ts";
import type { Call, Condition, Key, Value } from "./ast.ts";
import { compileCondition, type LogView } from "./compile.ts";
import { PATHS, SEVERITY_NUMBERS } from "./contexts.ts";
import { OttlError, OttlEvalError } from "./errors.ts";
import { formatCondition } from "./format.ts";
import { type AnyValue, type KeyValue, validateLogs } from "./otlp.ts";
import { parseCondition } from "./parser.ts";
import { compileRe2, Re2Error } from "./regex.ts";
import { compare, EMPTY, fromAny, index, kindOf, lookup, stringLike, type Kind, type OttlValue } from "./values.ts";

type Random = () => number;

function mulberry32(seed: number): Random {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const int = (r: Random, n: number) => Math.floor(r() * n);
const pick = <T>(r: Random, items: readonly T[]): T => items[int(r, items.length)]!;

/** Runs `check` for `runs` seeds; a failure reports the seed that replays it. */
function forAll(runs: number, check: (r: Random, seed: number) => void): void {
  for (let seed = 1; seed <= runs; seed++) {
    try {
      check(mulberry32(seed), seed);
    } catch (error) {
      throw new Error(`seed ${seed}: ${(error as Error).message}`);
    }
  }
}

const CHARS = ["a", "Z", "0", " ", '"', "\\", "\n", "\t", "\r", "\u0001", "\u007f", "é", "😀", "/", "?", "'", "x"];
const genString = (r: Random) => Array.from({ length: int(r, 6) }, () => pick(r, CHARS)).join("");
const KEYS = ["a", "b", "k", "http.method"];
const PATTERNS = ["^a", "(?i)get", "\\d+", "^$", "/healthz", "[[:alpha:]]+", ".*", "(?s)a.b"];
const FUNCTIONS = ["IsString", "IsInt", "IsDouble", "IsBool", "IsMap", "IsList"];
const SEVERITIES = [...SEVERITY_NUMBERS.keys()];

function genKey(r: Random, first: boolean): Key {
  return first || r() < 0.6 ? pick(r, KEYS) : BigInt(int(r, 3));
}

function genPath(r: Random): Value {
  const name = pick(r, Object.keys(PATHS.log));
  const rule = PATHS.log[name]!;
  const count = rule === "none" ? 0 : rule === "map" ? 1 + int(r, 2) : int(r, 3);
  return { kind: "path", fields: name.split("."), keys: Array.from({ length: count }, (_, i) => genKey(r, i === 0 && rule === "map")) };
}

function genLiteral(r: Random): Value {
  switch (int(r, 6)) {
    case 0:
      return { kind: "literal", value: genString(r) };
    case 1:
      return { kind: "literal", value: pick(r, [0n, 1n, -1n, 13n, 503n, 9223372036854775807n, -9223372036854775808n, 9007199254740993n]) };
    case 2:
      return { kind: "literal", value: pick(r, [0.5, -0, 2, 1e21, 1.5e-7, -3.25, 13, 0.1]) };
    case 3:
      return { kind: "literal", value: r() < 0.5 };
    case 4:
      return { kind: "literal", value: null };
    default:
      return { kind: "enum", name: pick(r, SEVERITIES) };
  }
}

function genCall(r: Random, depth: number): Call {
  if (r() < 0.5) return { kind: "call", name: "IsMatch", args: [genValue(r, depth - 1), { kind: "literal", value: pick(r, PATTERNS) }] };
  return { kind: "call", name: pick(r, FUNCTIONS), args: [genValue(r, depth - 1)] };
}

function genValue(r: Random, depth: number): Value {
  const roll = r();
  if (roll < 0.5) return genPath(r);
  if (roll < 0.85 || depth <= 0) return genLiteral(r);
  return genCall(r, depth);
}

function genCondition(r: Random, depth: number): Condition {
  const roll = int(r, depth > 0 ? 7 : 3);
  switch (roll) {
    case 0:
      return { kind: "compare", op: pick(r, ["==", "!=", "<", ">", "<=", ">="] as const), left: genValue(r, 2), right: genValue(r, 2) };
    case 1:
      return { kind: "bool", value: r() < 0.5 };
    case 2:
      return { kind: "call", call: genCall(r, 2) };
    case 3:
      return { kind: "not", operand: genCondition(r, depth - 1) };
    case 4:
    case 5:
      return { kind: roll === 4 ? "or" : "and", operands: Array.from({ length: 2 + int(r, 2) }, () => genCondition(r, depth - 1)) };
    default:
      return { kind: "compare", op: "==", left: genPath(r), right: genLiteral(r) };
  }
}

describe("printing", () => {
  test("parse(format(tree)) is the tree, and format is a fixpoint", () => {
    forAll(3000, (r) => {
      const tree = genCondition(r, 4);
      const text = formatCondition(tree);
      const parsed = parseCondition(text);
      expect(parsed).toEqual(tree);
      expect(formatCondition(parsed)).toBe(text);
    });
  });
});

describe("hostile text raises only the typed errors", () => {
  const PIECES = [
    "body",
    "attributes",
    "resource",
    ".",
    "attributes",
    '["k"]',
    "[0]",
    "[",
    "]",
    '"',
    "\\",
    '\\"',
    "\\x4",
    "\\u00",
    "(",
    ")",
    "==",
    "!=",
    "<",
    ">=",
    "=",
    "!",
    " and ",
    " or ",
    "not ",
    "IsMatch(",
    "IsString(",
    ", ",
    ",",
    "1",
    "-",
    "+",
    "1.5",
    ".5",
    "e9",
    "0x",
    "true",
    "false",
    "nil",
    "SEVERITY_NUMBER_INFO",
    "Foo",
    " ",
    "\n",
    "\t",
    "é",
    "😀",
    "\u0000",
    "'",
    "{",
    "*",
    "#",
    "(?=",
    "[[:",
    "\\p{",
    "99999999999999999999",
  ];

  function expectTyped(source: string): void {
    try {
      parseCondition(source);
    } catch (error) {
      if (!(error instanceof OttlError)) throw new Error(`${JSON.stringify(source)} threw ${String(error)}`);
      expect(error.column).toBeGreaterThanOrEqual(1);
      expect(error.column).toBeLessThanOrEqual(source.length + 1);
    }
  }

  test("random token soup", () => {
    forAll(5000, (r) => expectTyped(Array.from({ length: 1 + int(r, 12) }, () => pick(r, PIECES)).join("")));
  });

  test("random characters", () => {
    forAll(3000, (r) => expectTyped(Array.from({ length: int(r, 30) }, () => String.fromCharCode(int(r, 128))).join("")));
  });

  test("valid conditions with one edit", () => {
    forAll(3000, (r) => {
      const text = formatCondition(genCondition(r, 3));
      const at = int(r, text.length + 1);
      const edit = pick(r, [
        () => text.slice(0, at) + text.slice(at + 1),
        () => text.slice(0, at) + pick(r, PIECES) + text.slice(at),
        () => text.slice(0, at),
        () => text.slice(at),
      ]);
      expectTyped(edit());
    });
  });

  test("deep nesting is refused, not a stack overflow", () => {
    expectTyped(`${"(".repeat(100_000)}true${")".repeat(100_000)}`);
    expectTyped(`${"IsString(".repeat(50_000)}body${")".repeat(50_000)}`);
    expectTyped("not ".repeat(10_000) + "true");
    expectTyped(`IsMatch(body, "${"(".repeat(50_000)}")`);
  });

  test("random RE2 patterns compile or raise Re2Error, and what compiles runs", () => {
    const RE = [
      "a",
      "é",
      "😀",
      ".",
      "*",
      "+",
      "?",
      "{2}",
      "{1,3}",
      "{,",
      "}",
      "(",
      ")",
      "(?:",
      "(?i)",
      "(?-i:",
      "(?P<n>",
      "(?<m>",
      "[",
      "]",
      "[^",
      "^",
      "$",
      "\\d",
      "\\s",
      "\\W",
      "\\b",
      "\\",
      "|",
      "[:alpha:]",
      "[:^space:]",
      "\\p{L}",
      "\\PN",
      "\\x{41}",
      "\\101",
      "\\Q",
      "\\E",
      "-",
      "(?=",
      "\\z",
      "\\A",
      "(?s)",
      "(?m)",
      "(?U)",
      "\\1",
      "\\k",
    ];
    forAll(5000, (r) => {
      const pattern = Array.from({ length: 1 + int(r, 10) }, () => pick(r, RE)).join("");
      let regex: RegExp;
      try {
        regex = compileRe2(pattern);
      } catch (error) {
        if (!(error instanceof Re2Error)) throw new Error(`${JSON.stringify(pattern)} threw ${String(error)}`);
        expect(error.offset).toBeGreaterThanOrEqual(0);
        expect(error.offset).toBeLessThanOrEqual(pattern.length);
        return;
      }
      regex.test(genString(r));
    });
  });

  test("random dry-run inputs are accepted or raise ValidationError", () => {
    const leaves: unknown[] = [
      null,
      1,
      -1,
      1.5,
      "s",
      "12",
      "",
      true,
      [],
      {},
      { stringValue: "x" },
      { intValue: "x" },
      { kvlistValue: { values: [{ key: "k" }] } },
    ];
    const genJson = (r: Random, depth: number): unknown => {
      if (depth === 0 || r() < 0.3) return pick(r, leaves);
      if (r() < 0.3) return Array.from({ length: int(r, 3) }, () => genJson(r, depth - 1));
      const keys = [
        "resourceLogs",
        "scopeLogs",
        "logRecords",
        "body",
        "attributes",
        "key",
        "value",
        "resource",
        "scope",
        "stringValue",
        "intValue",
        "arrayValue",
        "values",
        "severityNumber",
        "timeUnixNano",
      ];
      return Object.fromEntries(Array.from({ length: int(r, 4) }, () => [pick(r, keys), genJson(r, depth - 1)]));
    };
    forAll(5000, (r) => {
      try {
        validateLogs({ resourceLogs: [{ scopeLogs: [{ logRecords: [genJson(r, 5)] }] }, genJson(r, 5)] });
        validateLogs(genJson(r, 6));
      } catch (error) {
        if (!(error instanceof ValidationError)) throw error;
        expect(error.details[0]!.path).toStartWith("input");
      }
    });
  });
});

/** The same semantics as compile.ts, written as a plain walk over the tree. */
function interpret(condition: Condition, v: LogView): boolean {
  switch (condition.kind) {
    case "or":
      return condition.operands.some((c) => interpret(c, v));
    case "and":
      return condition.operands.every((c) => interpret(c, v));
    case "not":
      return !interpret(condition.operand, v);
    case "bool":
      return condition.value;
    case "call":
      return call(condition.call, v);
    case "compare":
      return compare(evaluate(condition.left, v).value, evaluate(condition.right, v).value, condition.op);
  }
}

function call(c: Call, v: LogView): boolean {
  const target = evaluate(c.args[0]!, v);
  if (c.name === "IsMatch") {
    const text = stringLike(target.value);
    return text !== null && compileRe2((c.args[1] as { value: string }).value).test(text);
  }
  return target.kind === { IsString: "string", IsInt: "int", IsDouble: "double", IsBool: "bool", IsMap: "map", IsList: "list" }[c.name];
}

function evaluate(value: Value, v: LogView): { value: OttlValue; kind: Kind } {
  switch (value.kind) {
    case "literal": {
      const x = value.value;
      if (typeof x === "bigint") return { value: Number.isSafeInteger(Number(x)) ? Number(x) : x, kind: "int" };
      const kind: Kind = x === null ? "nil" : typeof x === "string" ? "string" : typeof x === "number" ? "double" : "bool";
      return { value: x, kind };
    }
    case "enum":
      return { value: SEVERITY_NUMBERS.get(value.name)!, kind: "int" };
    case "call":
      return { value: call(value, v), kind: "bool" };
    case "path": {
      const name = value.fields.join(".");
      const keys = value.keys.map((k) => (typeof k === "bigint" ? Number(k) : k));
      if (name === "severity_text") return { value: v.log.severityText ?? "", kind: "string" };
      if (name === "severity_number") return { value: (v.log.severityNumber as number | undefined) ?? 0, kind: "int" };
      if (name === "instrumentation_scope.name") return { value: v.scope?.name ?? "", kind: "string" };
      if (name === "instrumentation_scope.version") return { value: v.scope?.version ?? "", kind: "string" };
      const ints: Record<string, string | number | undefined> = {
        time_unix_nano: v.log.timeUnixNano,
        observed_time_unix_nano: v.log.observedTimeUnixNano,
        flags: v.log.flags,
        dropped_attributes_count: v.log.droppedAttributesCount,
      };
      if (name in ints) {
        const n = BigInt(ints[name] ?? 0);
        return { value: Number.isSafeInteger(Number(n)) ? Number(n) : n, kind: "int" };
      }
      if (name === "trace_id.string") return { value: (v.log.traceId || "0".repeat(32)).toLowerCase(), kind: "string" };
      if (name === "span_id.string") return { value: (v.log.spanId || "0".repeat(16)).toLowerCase(), kind: "string" };
      let any: AnyValue | undefined;
      if (name === "body") {
        any = keys.length === 0 ? v.log.body : (v.log.body ?? EMPTY);
      } else {
        const map = name === "attributes" ? v.log.attributes : name === "resource.attributes" ? v.resource?.attributes : v.scope?.attributes;
        any = lookup(map, keys.shift() as string);
      }
      for (const key of keys) {
        if (any === undefined) break;
        any = index(any, key);
      }
      return { value: fromAny(any), kind: kindOf(any) };
    }
  }
}

function genAny(r: Random, depth: number): AnyValue | undefined {
  switch (int(r, depth > 0 ? 10 : 8)) {
    case 0:
      return undefined;
    case 1:
      return {};
    case 2:
    case 3:
      return { stringValue: pick(r, ["", "a", "GET /healthz", "1", "debug", genString(r)]) };
    case 4:
      return { intValue: pick(r, [0, 13, "503", "-1", "9223372036854775807", "9007199254740993"]) };
    case 5:
      return { doubleValue: pick(r, [0.5, 13, -0, 1e21, "NaN", "Infinity"]) };
    case 6:
      return { boolValue: r() < 0.5 };
    case 7:
      return { bytesValue: pick(r, ["", "AQI=", "3q2+7w=="]) };
    case 8:
      return { kvlistValue: { values: genAttributes(r, depth - 1) } };
    default:
      return { arrayValue: { values: Array.from({ length: int(r, 3) }, () => genAny(r, depth - 1) ?? {}) } };
  }
}

function genAttributes(r: Random, depth: number): KeyValue[] {
  return Array.from({ length: int(r, 4) }, () => {
    const value = genAny(r, depth);
    return value === undefined ? { key: pick(r, KEYS) } : { key: pick(r, KEYS), value };
  });
}

function outcome(run: () => boolean): boolean | "error" {
  try {
    return run();
  } catch (error) {
    if (error instanceof OttlEvalError) return "error";
    throw error;
  }
}

describe("the compiled evaluator", () => {
  test("agrees with the interpreter on random conditions and records, errors included", () => {
    forAll(3000, (r) => {
      const condition = genCondition(r, 3);
      const compiled = compileCondition(formatCondition(condition));
      for (let i = 0; i < 5; i++) {
        const v: LogView = {
          log: {
            body: genAny(r, 2),
            attributes: genAttributes(r, 2),
            severityText: pick(r, [undefined, "INFO", ""]),
            severityNumber: pick(r, [undefined, 9, 17]),
          },
          scope: r() < 0.5 ? undefined : { name: "lib", version: "1", attributes: genAttributes(r, 1) },
          resource: r() < 0.5 ? undefined : { attributes: genAttributes(r, 1) },
        };
        expect(outcome(() => compiled(v))).toBe(outcome(() => interpret(condition, v)));
      }
    });
  });
});
