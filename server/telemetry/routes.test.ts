import { describe, expect, test } from "bun:test";
import type { Snapshot } from "../configstore/layout.ts";
import { loadCase } from "../render/testdata/load.ts";
import { flowsOfRoutes, routeRates } from "./routes.ts";
import type { ComponentRate } from "./window.ts";

function snapshotOf(name: string): { snapshot: Snapshot; collector: { id: string; name: string } } {
  const input = loadCase(name).input!;
  return {
    collector: input.collector,
    snapshot: {
      sources: new Map(input.sources),
      destinations: new Map(input.destinations),
      pipelines: new Map(input.pipelines),
      routes: new Map(input.routes.map((r) => [r.id, r])),
      activations: new Map([[input.collector.id, input.activations]]),
    },
  };
}

const rate = (kind: ComponentRate["kind"], id: string, signal: ComponentRate["signal"], i: number | null, o: number | null): ComponentRate => ({
  id,
  kind,
  signal,
  in: i,
  out: o,
  errors: null,
});

describe("route rates", () => {
  test("routes map to their flows: processors by <type>/<flow>_<node>, a processor-less flow by its unshared receiver", () => {
    const { snapshot, collector } = snapshotOf("multi-signal");
    const flows = flowsOfRoutes(snapshot, collector);
    expect([...flows].map(([id, f]) => [id, f.name])).toEqual([
      ["r-logs", "logs_otlp"],
      ["r-traces", "traces_otlp"],
    ]);
    const rates = routeRates(["r-traces", "r-logs"], flows, [
      rate("receiver", "otlp/otlp", "logs", 30, 30),
      rate("receiver", "otlp/otlp", "traces", 100, 100),
      rate("processor", "filter/traces_otlp_drop_health", "traces", 100, 60),
    ]);
    expect(rates).toEqual([
      { routeId: "r-logs", in: 30, out: 30 },
      { routeId: "r-traces", in: 100, out: 60 },
    ]);
  });

  test("a branching flow: in is what enters one branch, out is summed over the branches' last processors", () => {
    const { snapshot, collector } = snapshotOf("branching");
    const flows = flowsOfRoutes(snapshot, collector);
    const rates = routeRates(["r1"], flows, [
      rate("processor", "attributes/app_logs_apps_audit", "logs", 200, 200),
      rate("processor", "filter/app_logs_apps_drop_debug", "logs", 200, 150),
      rate("processor", "batch/app_logs_apps_batch", "logs", 150, 150),
      rate("processor", "resource/app_logs_apps_tag", "logs", 150, 150),
    ]);
    expect(rates).toEqual([{ routeId: "r1", in: 200, out: 500 }]);
  });

  test("no data yet, or a route the plan does not know: null rates", () => {
    const { snapshot, collector } = snapshotOf("multi-signal");
    const flows = flowsOfRoutes(snapshot, collector);
    expect(routeRates(["r-traces", "r-gone"], flows, [])).toEqual([
      { routeId: "r-gone", in: null, out: null },
      { routeId: "r-traces", in: null, out: null },
    ]);
  });
});
