/**
 * The duration grammars against upstream's own test tables: Go's
 * src/time/time_test.go (parseDurationTests, parseDurationErrorTests) and
 * prometheus/common model/time_test.go (TestParseDuration,
 * TestParseBadDuration, v0.70.1), then the catalog fields that use them.
 */
import { describe, expect, test } from "bun:test";
import { ValidationError } from "../errors.ts";
import { parseDuration, parseGoDuration, parsePrometheusDuration } from "./durations.ts";
import { validateComponentConfig } from "./validate.ts";

const NS = 1n;
const US = 1000n;
const MS = 1000n * US;
const S = 1000n * MS;
const M = 60n * S;
const H = 60n * M;
const D = 24n * H;

describe("Go time.ParseDuration", () => {
  const accepted: [string, bigint][] = [
    ["0", 0n],
    ["5s", 5n * S],
    ["30s", 30n * S],
    ["1478s", 1478n * S],
    ["-5s", -5n * S],
    ["+5s", 5n * S],
    ["-0", 0n],
    ["+0", 0n],
    ["5.0s", 5n * S],
    ["5.6s", 5n * S + 600n * MS],
    ["5.s", 5n * S],
    [".5s", 500n * MS],
    ["1.0s", S],
    ["1.00s", S],
    ["1.004s", S + 4n * MS],
    ["1.0040s", S + 4n * MS],
    ["100.00100s", 100n * S + MS],
    ["10ns", 10n * NS],
    ["11us", 11n * US],
    ["12\u00b5s", 12n * US],
    ["12\u03bcs", 12n * US],
    ["13ms", 13n * MS],
    ["14s", 14n * S],
    ["15m", 15n * M],
    ["16h", 16n * H],
    ["3h30m", 3n * H + 30n * M],
    ["10.5s4m", 4n * M + 10n * S + 500n * MS],
    ["-2m3.4s", -(2n * M + 3n * S + 400n * MS)],
    ["1h2m3s4ms5us6ns", H + 2n * M + 3n * S + 4n * MS + 5n * US + 6n * NS],
    ["39h9m14.425s", 39n * H + 9n * M + 14n * S + 425n * MS],
    ["52763797000ns", 52763797000n],
    ["9007199254740993ns", 9007199254740993n],
    ["9223372036854775807ns", (1n << 63n) - 1n],
    ["9223372036854775.807us", (1n << 63n) - 1n],
    ["9223372036s854ms775us807ns", (1n << 63n) - 1n],
    ["-9223372036854775808ns", -(1n << 63n)],
    ["-9223372036854775.808us", -(1n << 63n)],
    ["-2562047h47m16.854775808s", -(1n << 63n)],
    ["0.100000000000000000000h", 6n * M],
  ];
  const rejected = [
    "",
    "3",
    "-",
    "s",
    ".",
    "-.",
    ".s",
    "+.s",
    "1d",
    "\x85\x85",
    "\uFFFD",
    "\uFFFD hello \uFFFD world",
    "9223372036854775810ns",
    "9223372036854775808ns",
    "-9223372036854775809ns",
    "9223372036854776us",
    "3000000h",
    "9223372036854775.808us",
    "9223372036854ms775us808ns",
  ];
  for (const [text, ns] of accepted) test(`accepts ${JSON.stringify(text)}`, () => expect(parseGoDuration(text)).toBe(ns));
  test("rejects what Go rejects", () => {
    for (const text of rejected) expect([text, parseGoDuration(text)]).toEqual([text, null]);
  });
  test("takes `0.3333333333333333333h` (Go rounds its fraction to 20m within a nanosecond)", () => {
    const ns = parseGoDuration("0.3333333333333333333h")!;
    expect(ns - 20n * M).toBeLessThanOrEqual(0n);
    expect(ns - 20n * M).toBeGreaterThanOrEqual(-1n);
  });
});

describe("Prometheus model.ParseDuration", () => {
  const accepted: [string, bigint][] = [
    ["0", 0n],
    ["0w", 0n],
    ["0s", 0n],
    ["324ms", 324n * MS],
    ["3s", 3n * S],
    ["5m", 5n * M],
    ["1h", H],
    ["4d", 4n * D],
    ["4d1h", 4n * D + H],
    ["14d", 14n * D],
    ["3w", 21n * D],
    ["3w2d1h", 23n * D + H],
    ["10y", 3650n * D],
  ];
  const rejected = ["1", "1y1m1d", "1.5d", "d", "294y", "200y10400w", "107675d", "2584200h", "", "-3s", "30s1m", "1m1m", "5us"];
  for (const [text, ns] of accepted) test(`accepts ${JSON.stringify(text)}`, () => expect(parsePrometheusDuration(text)).toBe(ns));
  test("rejects what Prometheus rejects (units out of order or twice, fractions, signs)", () => {
    for (const text of rejected) expect([text, parsePrometheusDuration(text)]).toEqual([text, null]);
  });
});

test("a value for both grammars must parse in each: Go has no d/w/y, Prometheus no fractions, sign or order freedom", () => {
  expect(parseDuration("1h30m", ["go", "prometheus"])).toBe(H + 30n * M);
  for (const text of ["30s1m", "1d", "1.5s", "+5s", "500us"]) expect(parseDuration(text, ["go", "prometheus"])).toBeNull();
});

describe("catalog duration fields", () => {
  const problem = (kind: "source" | "processor", type: string, config: Record<string, unknown>) => {
    try {
      validateComponentConfig(kind, type, config);
      return undefined;
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      return error.details[0];
    }
  };

  test("prometheus scrape_interval: what both Prometheus and Alloy parse, positive", () => {
    for (const ok of ["15s", "1m", "1h30m", "500ms", "1m30s"])
      expect(problem("source", "prometheus", { targets: ["a:1"], scrape_interval: ok })).toBeUndefined();
    for (const bad of ["30s1m", "1d", "1.5s", "0", "0s", "-1s", "1m1m", ""]) {
      expect(problem("source", "prometheus", { targets: ["a:1"], scrape_interval: bad })).toEqual({
        path: "config.scrape_interval",
        message: "must be a positive duration such as 15s, 1m or 1h30m (units h, m, s, ms, largest first)",
      });
    }
  });

  test("hostmetrics collection_interval and batch timeout: Go durations (fractions and any order allowed), never negative", () => {
    for (const ok of ["1.5s", "30s1m", "250ms"]) expect(problem("source", "hostmetrics", { collection_interval: ok })).toBeUndefined();
    expect(problem("source", "hostmetrics", { collection_interval: "0s" })?.path).toBe("config.collection_interval");
    expect(problem("source", "hostmetrics", { collection_interval: "1d" })?.path).toBe("config.collection_interval");
    expect(problem("processor", "batch", { timeout: "0" })).toBeUndefined();
    for (const bad of ["-1s", "1d", "3000000h", "5"]) {
      expect(problem("processor", "batch", { timeout: bad })).toEqual({ path: "config.timeout", message: "must be a duration such as 500ms, 10s or 1m30s" });
    }
  });
});
