import { describe, expect, test } from "bun:test";
import { block, encodeAlloy } from "../../alloy-syntax.ts";
import { runtimeRProblems } from "../../../render/parity.ts";
import { findType } from "../../registry.ts";
import { validateComponentConfig } from "../../validate.ts";

/** Looked up as the API does, so the test also fails when the type is not registered. */
const k8sEventsSource = findType("source", "k8s_events")!;

const OUTPUT = block("output", undefined, []);

describe("k8s_events source", () => {
  test("Runtime O watches the events resource with k8sobjects; Runtime R reads loki.source.kubernetes_events into otelcol", () => {
    const config = validateComponentConfig("source", "k8s_events", { namespaces: ["default", "kube-system"] });
    expect(k8sEventsSource.otelcol(config)).toEqual({
      type: "k8sobjects",
      config: { auth_type: "serviceAccount", objects: [{ name: "events", mode: "watch", namespaces: ["default", "kube-system"] }] },
    });
    const chain = k8sEventsSource.alloy!(config, "ev", OUTPUT);
    expect(chain.map((b) => b.name)).toEqual(["loki.source.kubernetes_events", "otelcol.receiver.loki"]);
    expect(encodeAlloy(chain)).toContain('namespaces = ["default", "kube-system"]');
    const all = validateComponentConfig("source", "k8s_events", {});
    expect(k8sEventsSource.otelcol(all).config.objects).toEqual([{ name: "events", mode: "watch" }]);
    expect(encodeAlloy(k8sEventsSource.alloy!(all, "ev", OUTPUT))).not.toContain("namespaces");
  });

  test("records differ as a whole, so any processor read of them is refused on Runtime R", () => {
    const problems = runtimeRProblems("k8s_events", [
      { type: "filter", config: { logs: { log_record: ['attributes["event.name"] == "x"'] } }, path: "p" },
      { type: "batch", config: {}, path: "b" },
    ]);
    expect(problems.map((p) => p.path)).toEqual(["p.logs.log_record[0]"]);
    expect(problems[0]!.message).toContain("a logfmt line");
  });

  test("refuses a namespace name Kubernetes would not take", () => {
    expect(() => validateComponentConfig("source", "k8s_events", { namespaces: ["Kube_System"] })).toThrow("namespace");
  });
});
