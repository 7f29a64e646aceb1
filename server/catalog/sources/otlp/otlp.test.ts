import { describe, expect, test } from "bun:test";
import { block } from "../../alloy-syntax.ts";
import { findType } from "../../registry.ts";
import { validateComponentConfig } from "../../validate.ts";

/** Looked up as the API does, so the test also fails when the type is not registered. */
const otlpSource = findType("source", "otlp")!;

describe("otlp source", () => {
  test("listens on gRPC and HTTP on loopback by default, in both runtimes", () => {
    const config = validateComponentConfig("source", "otlp", {});
    expect(otlpSource.otelcol(config)).toEqual({
      type: "otlp",
      config: { protocols: { grpc: { endpoint: "localhost:4317" }, http: { endpoint: "localhost:4318" } } },
    });
    expect(otlpSource.alloy!(config, "o", block("output", undefined, [])).map((b) => b.name)).toEqual(["otelcol.receiver.otlp"]);
  });

  test("must listen on something", () => {
    expect(() => validateComponentConfig("source", "otlp", { grpc: { enabled: false }, http: { enabled: false } })).toThrow(
      expect.objectContaining({ details: [{ path: "config.grpc.enabled", message: "at least one of grpc and http must be enabled" }] }),
    );
  });
});
