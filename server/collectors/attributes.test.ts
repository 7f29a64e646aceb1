import { describe, expect, test } from "bun:test";
import type { Collector } from "../../shared/collectors.ts";
import { matches, parseMatcherList } from "../../shared/matchers.ts";
import {
  attributeValues,
  boundReported,
  collectorAttributes,
  MAX_REPORTED_CHARS,
  MAX_REPORTED_KEYS,
  MAX_REPORTED_VALUE_LENGTH,
  referenceValues,
  type CollectorAttribute,
  sameReported,
} from "./attributes.ts";

const NONE = new Set<string>();

const base: Collector = {
  id: "c1",
  name: "edge",
  environment: "prod",
  managementMode: "rcfg-remotecfg",
  tags: { team: "a" },
  reported: { team: "reported", region: "eu", "collector.id": "spoofed" },
  status: "online",
  lastSeen: null,
  health: null,
  createdAt: "",
  updatedAt: "",
};

describe("collector attributes", () => {
  test("reported < set (tags, environment) < virtual, with their origins; a reported one targets only when trusted", () => {
    const all: Record<string, CollectorAttribute> = {
      team: { value: "a", origin: "set", targets: true },
      region: { value: "eu", origin: "reported", targets: false },
      environment: { value: "prod", origin: "set", targets: true },
      "collector.id": { value: "c1", origin: "virtual", targets: true },
      "collector.name": { value: "edge", origin: "virtual", targets: true },
      "collector.mode": { value: "rcfg-remotecfg", origin: "virtual", targets: true },
    };
    expect(collectorAttributes(base, NONE)).toEqual(all);
    expect(collectorAttributes(base, new Set(["region"]))).toEqual({ ...all, region: { value: "eu", origin: "reported", targets: true } });
    // References read every value; matchers only those that target.
    expect(referenceValues(base)).toEqual(Object.fromEntries(Object.entries(all).map(([k, v]) => [k, v.value])));
    const { region: _, ...own } = referenceValues(base);
    expect(attributeValues(base, NONE)).toEqual(own);
    expect(attributeValues(base, new Set(["region"]))).toEqual(referenceValues(base));
  });

  test("an untrusted reported value never satisfies a matcher; trusting its key (a new set) is read at once", () => {
    const reporter = { ...base, tags: {}, reported: { team: "payments" } };
    const wants = parseMatcherList(["team=payments"]);
    expect(matches(wants, attributeValues(reporter, NONE))).toBe(false);
    expect(matches(wants, attributeValues(reporter, new Set(["team"])))).toBe(true);
    expect(matches(wants, attributeValues(reporter, NONE))).toBe(false);
  });

  test("a record without reported attributes or environment", () => {
    const plain = { ...base, reported: undefined, environment: null, tags: {} };
    expect(Object.keys(attributeValues(plain, NONE))).toEqual(["collector.id", "collector.name", "collector.mode"]);
    expect(matches(parseMatcherList(['environment=""', "collector.mode=rcfg-remotecfg"]), attributeValues(plain, NONE))).toBe(true);
  });

  test("reports are bounded: sorted, virtual and over-long keys dropped, values cut, at most MAX_REPORTED_KEYS", () => {
    const many = Array.from({ length: 100 }, (_, i) => [`k${String(i).padStart(3, "0")}`, "v".repeat(1000)] as [string, string]);
    const bounded = boundReported([...many.reverse(), ["collector.name", "x"], ["x".repeat(129), "y"], ["", "z"]]);
    expect(Object.keys(bounded)[0]).toBe("k000");
    expect(bounded.k000!.length).toBe(MAX_REPORTED_VALUE_LENGTH);
    expect("collector.name" in bounded).toBe(false);
    // 4 + 256 characters each: the size bound stops it before the count bound.
    expect(Object.keys(bounded)).toHaveLength(Math.floor(MAX_REPORTED_CHARS / 260));
    const small = boundReported(Array.from({ length: 100 }, (_, i) => [`k${String(i).padStart(3, "0")}`, "v"] as [string, string]));
    expect(Object.keys(small)).toHaveLength(MAX_REPORTED_KEYS);
  });

  test("sameReported compares keys and values, not order", () => {
    expect(sameReported({ a: "1", b: "2" }, { b: "2", a: "1" })).toBe(true);
    expect(sameReported(undefined, {})).toBe(true);
    expect(sameReported({ a: "1" }, { a: "2" })).toBe(false);
    expect(sameReported({ a: "1" }, { a: "1", b: "" })).toBe(false);
  });
});
