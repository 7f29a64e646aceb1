import { describe, expect, test } from "bun:test";
import { findType, runtimeProblem } from "../../registry.ts";
import { validateComponentConfig } from "../../validate.ts";

/** Looked up as the API does, so the test also fails when the type is not registered. */
const k8sClusterSource = findType("source", "k8s_cluster")!;

describe("k8s_cluster source", () => {
  test("renders the k8s_cluster receiver with upstream's defaults written out", () => {
    const config = validateComponentConfig("source", "k8s_cluster", {});
    expect(k8sClusterSource.otelcol(config)).toEqual({
      type: "k8s_cluster",
      config: { auth_type: "serviceAccount", collection_interval: "10s", node_conditions_to_report: ["Ready"], distribution: "kubernetes" },
    });
  });

  test("has no Runtime R form and says why; Runtime O runs it", () => {
    expect(k8sClusterSource.alloy).toBeUndefined();
    expect(runtimeProblem(k8sClusterSource, "alloy")).toContain("grafana/alloy has no otelcol.receiver.k8s_cluster");
    expect(runtimeProblem(k8sClusterSource, "otelcol")).toBeUndefined();
  });

  test("refuses an unknown node condition, a bad interval and a third auth type", () => {
    expect(() => validateComponentConfig("source", "k8s_cluster", { node_conditions_to_report: ["Bogus"] })).toThrow("node_conditions_to_report");
    expect(() => validateComponentConfig("source", "k8s_cluster", { collection_interval: "0s" })).toThrow("must be a positive duration");
    expect(() => validateComponentConfig("source", "k8s_cluster", { auth_type: "none" })).toThrow("auth_type");
  });
});
