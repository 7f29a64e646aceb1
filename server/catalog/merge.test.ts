import { describe, expect, test } from "bun:test";
import { ValidationError } from "../errors.ts";
import { mergeConfig } from "./merge.ts";
import { mergeOverrides } from "./validate.ts";

describe("mergeConfig (JSON Merge Patch)", () => {
  test("merges objects key by key, replaces lists and scalars, removes keys set to null", () => {
    const base = { endpoint: "a:1", tls: { insecure: false, ca: "x" }, headers: { A: "1", B: "2" }, include: ["/a", "/b"] };
    const merged = mergeConfig(base, { tls: { insecure: true }, headers: { B: null, C: "3" }, include: ["/c"] });
    expect(merged).toEqual({ endpoint: "a:1", tls: { insecure: true, ca: "x" }, headers: { A: "1", C: "3" }, include: ["/c"] });
  });

  test("leaves both inputs untouched", () => {
    const base = { tls: { insecure: false } };
    const overrides = { tls: { insecure: true } };
    mergeConfig(base, overrides);
    expect(base).toEqual({ tls: { insecure: false } });
    expect(overrides).toEqual({ tls: { insecure: true } });
  });

  test("empty overrides keep the config", () => {
    expect(mergeConfig({ a: 1 }, {})).toEqual({ a: 1 });
  });
});

describe("mergeOverrides", () => {
  test("validates the merged config and applies defaults", () => {
    const merged = mergeOverrides("destination", "otlp", { endpoint: "gw:4317" }, { tls: { insecure: true } });
    expect(merged).toEqual({ endpoint: "gw:4317", tls: { insecure: true }, headers: {} });
  });

  test("names problems from configOverrides", () => {
    let error: unknown;
    try {
      mergeOverrides("source", "filelog", { include: ["/a.log"] }, { start_at: "middle", include: null });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).details.map((d) => d.path).sort()).toEqual([
      "configOverrides.include",
      "configOverrides.start_at",
    ]);
  });

  test("an override of an unknown key is named", () => {
    expect(() => mergeOverrides("destination", "debug", {}, { level: "high" })).toThrow("configOverrides.level");
  });
});
