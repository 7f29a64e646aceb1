import { describe, expect, test } from "bun:test";
import { block } from "../../alloy-syntax.ts";
import { findType } from "../../registry.ts";
import { validateComponentConfig } from "../../validate.ts";

/** Looked up as the API does, so the test also fails when the type is not registered. */
const prometheusSource = findType("source", "prometheus")!;

describe("prometheus source", () => {
  test("scrapes its targets every minute by default: one scrape config on Runtime O, prometheus.scrape into the otelcol receiver on Runtime R", () => {
    const config = validateComponentConfig("source", "prometheus", { targets: ["localhost:9100"] });
    expect(prometheusSource.otelcol(config)).toEqual({
      type: "prometheus",
      config: { config: { scrape_configs: [{ job_name: "prometheus", scrape_interval: "60s", static_configs: [{ targets: ["localhost:9100"] }] }] } },
    });
    expect(prometheusSource.alloy!(config, "p", block("output", undefined, [])).map((b) => b.name)).toEqual([
      "prometheus.scrape",
      "otelcol.receiver.prometheus",
    ]);
  });

  test("needs a target", () => {
    expect(() => validateComponentConfig("source", "prometheus", {})).toThrow(
      expect.objectContaining({ details: [expect.objectContaining({ path: "config.targets" })] }),
    );
  });
});
