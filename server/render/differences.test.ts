import { describe, expect, test } from "bun:test";
import type { Collector } from "../../shared/collectors.ts";
import type { Snapshot } from "../configstore/layout.ts";
import { fleetRenderer } from "../rollout/renderer.ts";
import { publishPlan } from "../rollout/publish-plan.ts";
import { previewForCollector } from "../rollout/preview.ts";
import { findType } from "../catalog/registry.ts";
import { runtimeDifferences } from "./differences.ts";
import { pipelinePreviewDifferences } from "./preview.ts";
import { byId, loadCase } from "./testdata/load.ts";
import { collectorRecord as collector } from "../testutil.ts";

/** The metrics case (host metrics and a Prometheus scrape) on collectors o-1 (Runtime O) and r-1 (Runtime R). */
function metricsSnapshot(): Snapshot {
  const raw = loadCase("metrics").raw;
  const activation = raw.activations!;
  return {
    sources: byId(raw.sources),
    destinations: byId(raw.destinations),
    pipelines: byId(raw.pipelines),
    activations: new Map(["o-1", "r-1"].map((id) => [id, { ...activation, collectorId: id }])),
    routes: byId(
      ["o-1", "r-1"].flatMap((id) =>
        ["src-host", "src-pg"].map((sourceId) => ({ id: `${id}-${sourceId}`, collectorId: id, sourceId, pipelineId: "p-metrics" })),
      ),
    ),
  };
}

const HOST = findType("source", "hostmetrics")!.delivery.difference!;

describe("a difference svc cannot normalise is shown before publish", () => {
  test("runtimeDifferences names the differing types on Alloy only, once each", () => {
    expect(runtimeDifferences("alloy", ["prometheus", "hostmetrics", "syslog", "hostmetrics", "otlp"]).map((d) => d.sourceType)).toEqual([
      "hostmetrics",
      "syslog",
    ]);
    expect(runtimeDifferences("otelcol", ["hostmetrics", "syslog"])).toEqual([]);
  });

  test("the publish plan lists the Alloy collectors whose host metrics differ, and no Runtime O one", async () => {
    const snapshot = metricsSnapshot();
    const render = fleetRenderer(snapshot, () => new Set());
    const [o, r] = [collector("o-1", "opamp"), collector("r-1", "rcfg-remotecfg")];
    const plan = await publishPlan({
      commit: "c1",
      fleet: { rendered: [o, r].map((c) => ({ collector: c, config: render(c) })), pinned: [], failed: [] },
      targets: new Map(),
      rendered: async () => null,
    });
    expect(plan.changes.map((c) => c.collectorId)).toEqual(["o-1", "r-1"]);
    expect(plan.differences).toEqual([{ sourceType: "hostmetrics", difference: HOST, collectorIds: ["r-1"] }]);
  });

  test("the preview for an Alloy collector, and of the pipeline on its own for Alloy, carries the warning; Runtime O's none", () => {
    const snapshot = metricsSnapshot();
    const pipeline = snapshot.pipelines.get("p-metrics")!;
    const preview = (c: Collector) => previewForCollector(snapshot, pipeline, c, new Set());
    expect(preview(collector("r-1", "rcfg-remotecfg")).differences).toEqual([{ sourceType: "hostmetrics", difference: HOST }]);
    expect(preview(collector("o-1", "opamp")).differences).toEqual([]);
    const withRef = {
      ...pipeline,
      topology: { ...pipeline.topology, nodes: pipeline.topology.nodes.map((n) => (n.kind === "source" ? { ...n, ref: "src-host" } : n)) },
    };
    expect(pipelinePreviewDifferences(withRef, snapshot.sources, "alloy")).toEqual([{ sourceType: "hostmetrics", difference: HOST }]);
    expect(pipelinePreviewDifferences(withRef, snapshot.sources, "otelcol")).toEqual([]);
    // A node without ref is previewed as the OTLP stand-in, which delivers the same on both.
    expect(pipelinePreviewDifferences(pipeline, snapshot.sources, "alloy")).toEqual([]);
  });
});
