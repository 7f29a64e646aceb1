import { describe, expect, test } from "bun:test";
import { findType } from "../registry.ts";
import { validateComponentConfig } from "../validate.ts";
import { parseCollectorVersion, UNKNOWN_TARGET } from "../versions.ts";

/** Looked up as the API does, so the test also fails when the type is not registered. */
const otlpDestination = findType("destination", "otlp")!;

describe("otlp destination", () => {
  test("the exporter is `otlp` for unknown versions and before 0.144.0, `otlp_grpc` from then on", () => {
    const config = validateComponentConfig("destination", "otlp", { endpoint: "gw:4317" });
    const typeAt = (version: string) => otlpDestination.otelcol(config, { version: parseCollectorVersion(version) }).type;
    expect(otlpDestination.otelcol(config, UNKNOWN_TARGET).type).toBe("otlp");
    expect(typeAt("0.143.9")).toBe("otlp");
    expect(typeAt("0.144.0")).toBe("otlp_grpc");
    expect(otlpDestination.alloy!(config, "o")[0]!.name).toBe("otelcol.exporter.otlp");
  });

  test("needs an endpoint", () => {
    expect(() => validateComponentConfig("destination", "otlp", {})).toThrow(
      expect.objectContaining({ details: [expect.objectContaining({ path: "config.endpoint" })] }),
    );
  });
});
