import { describe, expect, test } from "bun:test";
import { findType, runtimeProblem } from "../../registry.ts";
import { validateComponentConfig } from "../../validate.ts";

/** Looked up as the API does, so the test also fails when the type is not registered. */
const kubeletstatsSource = findType("source", "kubeletstats")!;

describe("kubeletstats source", () => {
  test("renders the kubeletstats receiver; the endpoint and skip-verify only when set", () => {
    expect(kubeletstatsSource.otelcol(validateComponentConfig("source", "kubeletstats", {})).config).toEqual({
      auth_type: "serviceAccount",
      collection_interval: "10s",
      metric_groups: ["container", "pod", "node"],
    });
    const set = validateComponentConfig("source", "kubeletstats", {
      endpoint: "https://node-1:10250",
      insecure_skip_verify: true,
      metric_groups: ["volume", "node"],
    });
    expect(kubeletstatsSource.otelcol(set).config).toEqual({
      auth_type: "serviceAccount",
      endpoint: "https://node-1:10250",
      insecure_skip_verify: true,
      collection_interval: "10s",
      metric_groups: ["volume", "node"],
    });
  });

  test("has no Runtime R form and says why", () => {
    expect(kubeletstatsSource.alloy).toBeUndefined();
    expect(runtimeProblem(kubeletstatsSource, "alloy")).toContain("grafana/alloy has no otelcol.receiver.kubeletstats");
  });

  test("refuses an unknown metric group, none at all, and an endpoint without a port", () => {
    expect(() => validateComponentConfig("source", "kubeletstats", { metric_groups: ["cluster"] })).toThrow("metric_groups");
    expect(() => validateComponentConfig("source", "kubeletstats", { metric_groups: [] })).toThrow("metric_groups");
    expect(() => validateComponentConfig("source", "kubeletstats", { endpoint: "node-1" })).toThrow("must be host:port");
  });
});
