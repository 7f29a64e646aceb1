import { describe, expect, test } from "bun:test";
import type { CompareOp } from "./ast.ts";
import { OttlEvalError } from "./errors.ts";
import type { AnyValue } from "./otlp.ts";
import { codePointOrder, compare, EMPTY, fromAny, index, kindOf, stringLike, toInt } from "./values.ts";

const OPS: CompareOp[] = ["==", "!=", "<", "<=", ">", ">="];
const results = (a: Parameters<typeof compare>[0], b: Parameters<typeof compare>[1]) => OPS.map((op) => compare(a, b, op));

describe("compare, as Go's ottl compare.go", () => {
  test("nil equals nil (and is <= and >= it), and nothing else", () => {
    expect(results(null, null)).toEqual([true, false, false, true, false, true]);
    expect(results(null, "x")).toEqual([false, true, false, false, false, false]);
    expect(results(0, null)).toEqual([false, true, false, false, false, false]);
  });

  test("different types: only != is true", () => {
    for (const [a, b] of [
      ["1", 1],
      [true, 1],
      ["true", true],
      [1, { kvlistValue: {} }],
    ] as const) {
      expect(results(a, b)).toEqual([false, true, false, false, false, false]);
    }
  });

  test("ints and doubles compare as numbers, bigints exactly", () => {
    expect(results(1, 1.0)).toEqual([true, false, false, true, false, true]);
    expect(results(2, 2.5)).toEqual([false, true, true, true, false, false]);
    expect(results(9007199254740993n, 9007199254740992)).toEqual([false, true, false, false, true, true]);
    expect(results(NaN, NaN)).toEqual([false, true, false, false, false, false]);
  });

  test("strings in byte order, which is code point order", () => {
    expect(results("a", "b")).toEqual([false, true, true, true, false, false]);
    expect(compare("\uffff", "😀", "<")).toBe(true);
    expect(codePointOrder("😀", "\uffff")).toBeGreaterThan(0);
    expect(codePointOrder("ab", "a")).toBeGreaterThan(0);
  });

  test("bools order false < true; bytes by content; maps by identity", () => {
    expect(results(false, true)).toEqual([false, true, true, true, false, false]);
    const a = { bytesValue: "AQI=" };
    expect(results(a, { bytesValue: "AQI=" })).toEqual([true, false, false, true, false, true]);
    expect(compare(a, { bytesValue: "AQM=" }, "<")).toBe(true);
    const map: AnyValue = { kvlistValue: { values: [] } };
    expect(results(map, map)).toEqual([true, false, false, false, false, false]);
    expect(results(map, { kvlistValue: { values: [] } })).toEqual([false, true, false, false, false, false]);
  });
});

describe("reading OTLP AnyValues", () => {
  test("ints may be decimal strings, exact beyond 2^53", () => {
    expect(toInt("42")).toBe(42);
    expect(toInt(-7)).toBe(-7);
    expect(toInt("9223372036854775807")).toBe(9223372036854775807n);
    expect(fromAny({ intValue: "12" })).toBe(12);
    expect(fromAny({ doubleValue: "NaN" })).toBeNaN();
    expect(fromAny({ doubleValue: 1.5 })).toBe(1.5);
    expect(fromAny({ boolValue: false })).toBe(false);
    expect(fromAny({})).toBeNull();
    expect(fromAny(undefined)).toBeNull();
  });

  test("kinds", () => {
    const kinds = [
      { stringValue: "" },
      { intValue: 1 },
      { doubleValue: 1 },
      { boolValue: true },
      { kvlistValue: {} },
      { arrayValue: {} },
      { bytesValue: "" },
      {},
      undefined,
    ];
    expect(kinds.map(kindOf)).toEqual(["string", "int", "double", "bool", "map", "list", "bytes", "nil", "nil"]);
  });

  test("indexing follows the collector: maps by string, lists by in-range int, nothing else", () => {
    const map: AnyValue = { kvlistValue: { values: [{ key: "a", value: { stringValue: "x" } }, { key: "e" }] } };
    const list: AnyValue = { arrayValue: { values: [{ intValue: 1 }] } };
    expect(index(map, "a")).toEqual({ stringValue: "x" });
    expect(index(map, "missing")).toBeUndefined();
    expect(kindOf(index(map, "e"))).toBe("nil");
    expect(index(list, 0)).toEqual({ intValue: 1 });
    expect(() => index(map, 0)).toThrow(new OttlEvalError("a map must be indexed by a string"));
    expect(() => index(list, "a")).toThrow(new OttlEvalError("a list must be indexed by an int"));
    expect(() => index(list, 1)).toThrow(new OttlEvalError("index 1 is out of bounds"));
    expect(() => index(list, -1)).toThrow(new OttlEvalError("index -1 is out of bounds"));
    expect(() => index({ stringValue: "s" }, "a")).toThrow(new OttlEvalError("a string value cannot be indexed"));
    expect(() => index(EMPTY, "a")).toThrow(new OttlEvalError("a nil value cannot be indexed"));
  });
});

describe("stringLike, the text IsMatch sees", () => {
  test("scalars", () => {
    expect(stringLike("s")).toBe("s");
    expect(stringLike(null)).toBeNull();
    expect(stringLike(200)).toBe("200");
    expect(stringLike(9223372036854775807n)).toBe("9223372036854775807");
    expect(stringLike(1.5)).toBe("1.5");
    expect(stringLike(1e21)).toBe("1e+21");
    expect(stringLike(1e-7)).toBe("1e-7");
    expect(stringLike(-0)).toBe("-0");
    expect(stringLike(true)).toBe("true");
    expect(stringLike({ bytesValue: "3q2+7w==" })).toBe("deadbeef");
    expect(() => stringLike(NaN)).toThrow(OttlEvalError);
  });

  test("maps and lists as Go's encoding/json writes them: sorted keys, HTML-safe escapes", () => {
    const value: AnyValue = {
      kvlistValue: {
        values: [
          { key: "z", value: { arrayValue: { values: [{ intValue: "1" }, { doubleValue: 2.5 }, { boolValue: true }, {}] } } },
          { key: "a", value: { stringValue: '<b>&"\\\n\u2028\u0001' } },
          { key: "m", value: { bytesValue: "AQI=" } },
          { key: "a", value: { stringValue: "last wins" } },
          { key: "n" },
        ],
      },
    };
    expect(stringLike(value)).toBe('{"a":"last wins","m":"AQI=","n":null,"z":[1,2.5,true,null]}');
    const escapes: AnyValue = { arrayValue: { values: [{ stringValue: '<b>&"\\\n\u2028\u0001\b' }] } };
    expect(stringLike(escapes)).toBe(String.raw`["\u003cb\u003e\u0026\"\\\n\u2028\u0001\b"]`);
  });
});
