import { describe, expect, test } from "bun:test";
import { otelcolComponent, versionProblem } from "./upstream/tables.ts";
import type { OtelcolKind } from "./upstream/types.ts";
import { otelcolType, parseCollectorVersion, runsAtLeast, UNKNOWN_TARGET, usesNewKeys } from "./versions.ts";

const at = (version: string) => ({ version: parseCollectorVersion(version) });
const recorded = (kind: OtelcolKind, type: string) => otelcolComponent(kind, type)!;

describe("collector versions", () => {
  test("the collector's own 0.x numbering is read; anything else is unknown", () => {
    expect(parseCollectorVersion("0.144.0")).toEqual({ major: 0, minor: 144, patch: 0 });
    expect(parseCollectorVersion("v0.147.1-rc.1")).toEqual({ major: 0, minor: 147, patch: 1 });
    for (const other of ["9.3.1", "1.53.0", "", "latest", "0.144", null, undefined]) expect(parseCollectorVersion(other)).toBeNull();
  });

  test("renames apply from the version that introduced them; unknown gets the old name every version accepts", () => {
    expect(otelcolType(recorded("exporter", "otlp_grpc"), UNKNOWN_TARGET)).toBe("otlp");
    expect(otelcolType(recorded("exporter", "otlp_grpc"), at("0.143.0"))).toBe("otlp");
    expect(otelcolType(recorded("exporter", "otlp_grpc"), at("0.144.0"))).toBe("otlp_grpc");
    expect(otelcolType(recorded("exporter", "otlp_http"), at("0.159.0"))).toBe("otlp_http");
    expect(otelcolType(recorded("exporter", "debug"), at("0.159.0"))).toBe("debug");
    expect(usesNewKeys(recorded("processor", "filter"), at("0.145.0"))).toBe(false);
    expect(usesNewKeys(recorded("processor", "filter"), at("0.146.0"))).toBe(true);
    expect(runsAtLeast(UNKNOWN_TARGET, "0.1.0")).toBe(false);
  });

  test("a component's minimum version refuses only collectors known to be older", () => {
    expect(versionProblem("kafka", at("0.123.9"))).toBe("the kafka component needs collector v0.124.0 or later, and the collector reports v0.123.9");
    expect(versionProblem("kafka", at("0.124.0"))).toBeUndefined();
    expect(versionProblem("kafka", UNKNOWN_TARGET)).toBeUndefined();
    expect(versionProblem("filelog", at("0.100.0"))).toBeUndefined();
    expect(usesNewKeys(recorded("receiver", "kafka"), at("0.141.0"))).toBe(false);
    expect(usesNewKeys(recorded("receiver", "kafka"), at("0.142.0"))).toBe(true);
  });
});
