import { describe, expect, test } from "bun:test";
import { block, encodeAlloy } from "../../alloy-syntax.ts";
import { findType } from "../../registry.ts";
import { validateComponentConfig } from "../../validate.ts";

/** Looked up as the API does, so the test also fails when the type is not registered. */
const hostmetricsSource = findType("source", "hostmetrics")!;

describe("hostmetrics source", () => {
  test("scrapers map to node_exporter collectors in Runtime R", () => {
    const config = validateComponentConfig("source", "hostmetrics", { scrapers: ["system", "paging", "disk"] });
    expect(hostmetricsSource.otelcol(config).config).toEqual({ collection_interval: "60s", scrapers: { disk: {}, paging: {}, system: {} } });
    expect(encodeAlloy([hostmetricsSource.alloy!(config, "h", block("output", undefined, []))[0]!])).toContain(
      'set_collectors = ["diskstats", "vmstat", "stat", "time"]',
    );
  });
});
