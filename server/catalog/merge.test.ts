import { describe, expect, test } from "bun:test";
import { ValidationError } from "../errors.ts";
import type { TSchema } from "@sinclair/typebox";
import { mergeConfig } from "./merge.ts";
import { COMPONENT_TYPES } from "./registry.ts";
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

describe("a sensitive field's value in object form is one value", () => {
  const A = { secret: "0190a8c2-7b3e-7c41-9d2e-5f6a7b8c9d01" };
  const B = { secret: "0190a8c2-7b3e-7c41-9d2e-5f6a7b8c9d02" };
  const ENV = { env: "TOKEN" };
  const PLAIN = { value: "ops", secret: false };
  const KEEP = { secret: true, set: true, updatedAt: "2024-06-01T00:00:00.000Z" };

  test("an override in any form replaces the record's value in any form, never merges into it", () => {
    for (const base of [A, ENV, PLAIN, KEEP, "plaintext"]) {
      for (const patch of [B, ENV, PLAIN, KEEP, "new plaintext"]) {
        expect(mergeConfig({ headers: { Authorization: base, X: "1" } }, { headers: { Authorization: patch } })).toEqual({
          headers: { Authorization: patch, X: "1" },
        });
      }
    }
    expect(mergeConfig({ headers: { Authorization: A } }, { headers: { Authorization: null } })).toEqual({ headers: {} });
  });

  test("an object merged over a form does not keep the form's keys", () => {
    expect(mergeConfig({ headers: { A: PLAIN } }, { headers: { A: { value: "x" } } })).toEqual({ headers: { A: { value: "x" } } });
    expect(mergeConfig({ headers: { A: A } }, { headers: { A: { other: 1 } } })).toEqual({ headers: { A: { other: 1 } } });
  });

  test("no catalog object has a `secret` or `env` key, so no object merge is mistaken for a form", () => {
    const keys = (schema: TSchema): string[] => {
      const s = schema as { properties?: Record<string, TSchema>; patternProperties?: Record<string, TSchema>; items?: TSchema; anyOf?: TSchema[] };
      return [
        ...Object.keys(s.properties ?? {}),
        ...[...Object.values(s.properties ?? {}), ...Object.values(s.patternProperties ?? {}), ...(s.items ? [s.items] : []), ...(s.anyOf ?? [])].flatMap(keys),
      ];
    };
    const all = COMPONENT_TYPES.flatMap((t) => keys(t.schema));
    expect(all).toContain("headers");
    expect(all.filter((k) => k === "secret" || k === "env")).toEqual([]);
  });
});

describe("mergeOverrides", () => {
  test("validates the merged config and applies defaults", () => {
    const merged = mergeOverrides("destination", "otlp", { endpoint: "gw:4317" }, { tls: { insecure: true } });
    expect(merged).toEqual({
      endpoint: "gw:4317",
      tls: { insecure: true },
      headers: {},
      retry_on_failure: { enabled: true },
      sending_queue: { enabled: true },
    });
  });

  test("names problems from configOverrides", () => {
    let error: unknown;
    try {
      mergeOverrides("source", "filelog", { include: ["/a.log"] }, { start_at: "middle", include: null });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).details.map((d) => d.path).sort()).toEqual(["configOverrides.include", "configOverrides.start_at"]);
  });

  test("an override in another form replaces the record's secret and validates", () => {
    const record = { endpoint: "gw:4317", headers: { Authorization: { secret: "0190a8c2-7b3e-7c41-9d2e-5f6a7b8c9d01" } } };
    expect(mergeOverrides("destination", "otlp", record, { headers: { Authorization: { env: "TOKEN" } } }).headers).toEqual({
      Authorization: { env: "TOKEN" },
    });
    expect(() => mergeOverrides("destination", "otlp", record, { headers: { Authorization: { env: "no-dash" } } })).toThrow(
      "configOverrides.headers.Authorization: must name an environment variable",
    );
  });

  test("an override of an unknown key is named", () => {
    expect(() => mergeOverrides("destination", "debug", {}, { level: "high" })).toThrow("configOverrides.level");
  });
});
