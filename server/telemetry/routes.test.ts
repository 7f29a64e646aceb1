import { describe, expect, test } from "bun:test";
import type { Collector } from "../../shared/collectors.ts";
import type { PipelineRecord } from "../../shared/config-records.ts";
import type { Snapshot } from "../configstore/layout.ts";
import { loadCase } from "../render/testdata/load.ts";
import { collectorFlows, FlowComponents, flowRates } from "./routes.ts";
import type { ComponentRate } from "./window.ts";

function collectorOf(id: string, tags: Record<string, string> = {}): Collector {
  return {
    id,
    name: id,
    environment: null,
    managementMode: "opamp",
    tags,
    reported: {},
    status: "online",
    lastSeen: null,
    health: null,
    createdAt: "",
    updatedAt: "",
  };
}

function snapshotOf(name: string): { snapshot: Snapshot; collector: Collector } {
  const input = loadCase(name).input!;
  return {
    collector: collectorOf(input.collector.id),
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
    const flows = collectorFlows(snapshot, collector, new Set());
    expect(flows.flows.map((f) => [f.routeId, f.flow.name])).toEqual([
      ["r-logs", "logs_otlp"],
      ["r-traces", "traces_otlp"],
    ]);
    const { routes } = flowRates(flows, [
      rate("receiver", "otlp/otlp", "logs", 30, 30),
      rate("receiver", "otlp/otlp", "traces", 100, 100),
      rate("processor", "filter/traces_otlp_drop_health", "traces", 100, 60),
    ]);
    expect(routes).toEqual([
      { routeId: "r-logs", in: 30, out: 30 },
      { routeId: "r-traces", in: 100, out: 60 },
    ]);
  });

  test("a branching flow: in is what enters one branch, out is summed over the branches' last processors (the batch one's by what reached it)", () => {
    const { snapshot, collector } = snapshotOf("branching");
    // As the real collector reports them: nothing for the batch processor (names.ts PASS_THROUGH_PROCESSORS).
    const { routes, pipelines } = flowRates(collectorFlows(snapshot, collector, new Set()), [
      rate("processor", "attributes/app_logs_apps_audit", "logs", 200, 200),
      rate("processor", "filter/app_logs_apps_drop_debug", "logs", 200, 150),
      rate("processor", "resource/app_logs_apps_tag", "logs", 150, 150),
    ]);
    expect(routes).toEqual([{ routeId: "r1", in: 200, out: 500 }]);
    expect(pipelines).toEqual([{ pipelineId: expect.any(String), sourceId: expect.any(String), via: "route", routeId: "r1", in: 200, out: 500 }]);
  });

  test("a batch processor, which counts nothing of its own, passes on what reached it: from the processor before it, or from the flow's own receiver when it is first", () => {
    const { snapshot, collector } = snapshotOf("linear-logs");
    const flows = collectorFlows(snapshot, collector, new Set());
    const filtered = flowRates(flows, [
      rate("receiver", "filelog/nginx_access_logs", "logs", 90, 90),
      rate("processor", "filter/web_logs_nginx_access_logs_drop_health", "logs", 90, 60),
    ]);
    expect(filtered.routes).toEqual([{ routeId: expect.any(String), in: 90, out: 60 }]);
    // The same flow with its filter taken out: the batch processor is first, fed by the receiver.
    const flow = flows.flows[0]!.flow;
    const batch = flow.processors.at(-1)!;
    const onlyBatch = { ...flow, entry: [{ kind: "processor" as const, name: batch.name }], processors: [batch] };
    const lookup = new FlowComponents(flows.flows, [rate("receiver", `filelog/${flow.source}`, "logs", 40, 40)]);
    expect(lookup.processorRates(onlyBatch)).toEqual(new Map([[batch.name, { in: 40, out: 40, errors: null }]]));
    // Without the processor before it, nothing reached it that is known.
    expect(flowRates(flows, []).routes).toEqual([{ routeId: expect.any(String), in: null, out: null }]);
  });

  test("no data yet, or a route the plan does not know: null rates", () => {
    const { snapshot, collector } = snapshotOf("multi-signal");
    const flows = collectorFlows(snapshot, collector, new Set());
    flows.routeIds.push("r-gone");
    expect(flowRates(flows, []).routes).toEqual([
      { routeId: "r-gone", in: null, out: null },
      { routeId: "r-logs", in: null, out: null },
      { routeId: "r-traces", in: null, out: null },
    ]);
  });
});

describe("flows of matched pipelines", () => {
  /**
   * The "matched" case (p-fleet joins src-sys by matchers when env=prod and region=eu-*), plus
   * a route joining another source of the same name, src-z, to a same-named pipeline. The plan
   * names sources over all joins (src-sys first), so replaying its naming over routes alone
   * would give the route the matched flow's name.
   */
  function fleet(tags: Record<string, string>): { snapshot: Snapshot; collector: Collector } {
    const { snapshot } = snapshotOf("matched");
    const fleetPipeline = snapshot.pipelines.get("p-fleet")!;
    const routed: PipelineRecord = {
      ...fleetPipeline,
      id: "p-route",
      matchers: undefined,
      topology: { ...fleetPipeline.topology, nodes: fleetPipeline.topology.nodes.map((n) => (n.kind === "source" ? { id: n.id, kind: n.kind } : n)) },
    };
    snapshot.pipelines.set("p-route", routed);
    snapshot.sources.set("src-z", { ...snapshot.sources.get("src-sys")!, id: "src-z" });
    snapshot.routes.set("r1", { id: "r1", collectorId: "edge-9", sourceId: "src-z", pipelineId: "p-route" });
    snapshot.activations.get("edge-9")!.sources.push({ sourceId: "src-z", configOverrides: {} });
    snapshot.activations.get("edge-9")!.destinations.push({ destinationId: "dst-gw", configOverrides: {}, tags: {} });
    return { snapshot, collector: collectorOf("edge-9", tags) };
  }

  test("each flow maps by the source and pipeline it joins, and a matched one gets rates too", () => {
    const { snapshot, collector } = fleet({ env: "prod", region: "eu-west" });
    const flows = collectorFlows(snapshot, collector, new Set());
    expect(flows.flows.map((f) => [f.flow.pipelineId, f.flow.sourceId, f.routeId, f.flow.processors.map((p) => p.name)])).toEqual([
      ["p-fleet", "src-sys", undefined, ["fleet_system_logs_drop_debug"]],
      ["p-route", "src-z", "r1", ["fleet_system_logs_2_drop_debug"]],
    ]);
    const { routes, pipelines } = flowRates(flows, [
      rate("processor", "filter/fleet_system_logs_drop_debug", "logs", 100, 90),
      rate("processor", "filter/fleet_system_logs_2_drop_debug", "logs", 40, 10),
    ]);
    expect(routes).toEqual([{ routeId: "r1", in: 40, out: 10 }]);
    expect(pipelines).toEqual([
      { pipelineId: "p-fleet", sourceId: "src-sys", via: "matchers", in: 100, out: 90 },
      { pipelineId: "p-route", sourceId: "src-z", via: "route", routeId: "r1", in: 40, out: 10 },
    ]);
  });

  test("a collector whose attributes match no pipeline has only its routes' flows", () => {
    const { snapshot, collector } = fleet({ env: "dev" });
    const { pipelines } = flowRates(collectorFlows(snapshot, collector, new Set()), []);
    expect(pipelines).toEqual([{ pipelineId: "p-route", sourceId: "src-z", via: "route", routeId: "r1", in: null, out: null }]);
  });

  test("a route of the same join as a matched pipeline is one flow, reported as the route", () => {
    const { snapshot, collector } = fleet({ env: "prod", region: "eu-west" });
    snapshot.routes.set("r2", { id: "r2", collectorId: "edge-9", sourceId: "src-sys", pipelineId: "p-fleet" });
    const { routes, pipelines } = flowRates(collectorFlows(snapshot, collector, new Set()), []);
    expect(routes.map((r) => r.routeId)).toEqual(["r1", "r2"]);
    expect(pipelines.map((p) => [p.pipelineId, p.via, p.routeId])).toEqual([
      ["p-fleet", "route", "r2"],
      ["p-route", "route", "r1"],
    ]);
  });
});
