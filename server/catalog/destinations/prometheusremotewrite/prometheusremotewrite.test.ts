import { describe, expect, test } from "bun:test";
import { findType } from "../../registry.ts";
import { validateComponentConfig } from "../../validate.ts";

/** Looked up as the API does, so the test also fails when the type is not registered. */
const prometheusRemoteWriteDestination = findType("destination", "prometheusremotewrite")!;

describe("prometheusremotewrite destination", () => {
  test("otelcol.exporter.prometheus into prometheus.remote_write", () => {
    const config = validateComponentConfig("destination", "prometheusremotewrite", { endpoint: "http://mimir:9009/api/v1/push" });
    expect(prometheusRemoteWriteDestination.alloy!(config, "m").map((b) => `${b.name}.${b.label}`)).toEqual([
      "otelcol.exporter.prometheus.m",
      "prometheus.remote_write.m",
    ]);
  });
});
