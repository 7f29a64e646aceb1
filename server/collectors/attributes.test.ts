import { describe, expect, test } from "bun:test";
import type { Collector } from "../../shared/collectors.ts";
import { matches, parseMatcherList } from "../../shared/matchers.ts";
import { attributeValues, boundReported, collectorAttributes, MAX_REPORTED_CHARS, MAX_REPORTED_KEYS, MAX_REPORTED_VALUE_LENGTH, sameReported } from "./attributes.ts";

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
  test("reported < set (tags, environment) < virtual, with their origins", () => {
    expect(collectorAttributes(base)).toEqual({
      team: { value: "a", origin: "set" },
      region: { value: "eu", origin: "reported" },
      environment: { value: "prod", origin: "set" },
      "collector.id": { value: "c1", origin: "virtual" },
      "collector.name": { value: "edge", origin: "virtual" },
      "collector.mode": { value: "rcfg-remotecfg", origin: "virtual" },
    });
    expect(attributeValues(base)).toEqual(Object.fromEntries(Object.entries(collectorAttributes(base)).map(([k, v]) => [k, v.value])));
  });

  test("a record without reported attributes or environment", () => {
    const plain = { ...base, reported: undefined, environment: null, tags: {} };
    expect(Object.keys(attributeValues(plain))).toEqual(["collector.id", "collector.name", "collector.mode"]);
    expect(matches(parseMatcherList(["environment=\"\"", "collector.mode=rcfg-remotecfg"]), attributeValues(plain))).toBe(true);
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
