/** Render-time problems throw ValidationError naming what causes them; the plan's graph and names. */
import { describe, expect, test } from "bun:test";
import { DESTINATION_TYPES, PROCESSOR_TYPES } from "../catalog/index.ts";
import type { PipelineRecord } from "../../shared/config-records.ts";
import { ValidationError, type ErrorDetail } from "../errors.ts";
import { hasSensitive } from "../../shared/sensitive.ts";
import { renderAlloy } from "./alloy.ts";
import { HostEnvValue } from "../catalog/host-env.ts";
import { linearPaths, renderOtelcol } from "./otelcol.ts";
import { planCollector, planPreview } from "./plan.ts";
import { renderPipelinePreview } from "./preview.ts";
import { byId, loadCase, toInput } from "./testdata/load.ts";

function raw(name: string) {
  return structuredClone(loadCase(name).raw);
}

/** The ValidationError a render that must fail throws. */
function refused(render: () => unknown): ValidationError {
  let thrown: unknown;
  try {
    render();
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(ValidationError);
  return thrown as ValidationError;
}

/** The one problem of a render that must fail, for both runtimes alike. */
function problem(render: () => unknown): ErrorDetail {
  const details = refused(render).details;
  expect(details).toHaveLength(1);
  return details[0]!;
}

function bothRuntimes(c: ReturnType<typeof raw>): ErrorDetail {
  const input = toInput(c);
  const a = problem(() => renderOtelcol(input));
  expect(problem(() => renderAlloy(input))).toEqual(a);
  return a;
}

describe("render-time problems", () => {
  test("a destination node whose destination is not active on the collector names the node", () => {
    const c = raw("linear-logs");
    c.activations!.destinations = [];
    const p = bothRuntimes(c);
    expect(p.path).toBe("pipelines[p-web].topology.nodes[out].ref");
    expect(p.message).toContain("destination node 'out'");
    expect(p.message).toContain("not active on collector 'edge-1'");
  });

  test("a source that does not produce the pipeline's signal", () => {
    const c = raw("metrics");
    c.pipelines[0]!.signal = "logs";
    const p = bothRuntimes(c);
    expect(p.path).toBe("routes[r-host].sourceId");
    expect(p.message).toContain("does not produce logs");
  });

  test("a referenced destination that does not accept the pipeline's signal", () => {
    const c = raw("linear-logs");
    c.destinations.push({ id: "dst-mimir", name: "Mimir", type: "prometheusremotewrite", config: { endpoint: "http://m/api/v1/push" } });
    c.activations!.destinations.push({ destinationId: "dst-mimir", configOverrides: {}, tags: {} });
    c.pipelines[0]!.topology.nodes.find((n) => n.id === "out")!.ref = "dst-mimir";
    const p = bothRuntimes(c);
    expect(p.path).toBe("pipelines[p-web].topology.nodes[out].ref");
    expect(p.message).toContain("does not accept logs");
  });

  test("missing records", () => {
    const noSource = raw("linear-logs");
    noSource.sources = [];
    expect(bothRuntimes(noSource).path).toBe("routes[r1].sourceId");
    const noPipeline = raw("linear-logs");
    noPipeline.pipelines = [];
    expect(bothRuntimes(noPipeline).path).toBe("routes[r1].pipelineId");
    const noDestination = raw("linear-logs");
    noDestination.destinations = [];
    expect(bothRuntimes(noDestination)).toEqual({
      path: "pipelines[p-web].topology.nodes[out].ref",
      message: "destination 'dst-backend' does not exist",
    });
  });

  test("a routed source that is not active on the collector", () => {
    const c = raw("linear-logs");
    c.activations!.sources = [];
    expect(bothRuntimes(c).message).toBe("source 'src-nginx' is not active on collector 'edge-1'");
  });

  test("a destination node without ref when no active destination accepts the signal", () => {
    const c = raw("metrics");
    c.activations!.destinations = [];
    const p = bothRuntimes(c);
    expect(p.path).toBe("pipelines[p-metrics].topology.nodes[out]");
    expect(p.message).toContain("has none");
  });

  test("a pipeline without a source node for the routed source", () => {
    const c = raw("shared-destination");
    c.routes!.push({ id: "r3", collectorId: "gw-1", sourceId: "src-journal", pipelineId: "p-network" });
    expect(bothRuntimes(c).message).toBe("pipeline 'p-network' has no source node for source 'journal'");
  });

  test("bad overrides are named under the activation", () => {
    const c = raw("overrides");
    c.activations!.sources[0]!.configOverrides = { start_at: "now" };
    expect(bothRuntimes(c).path).toBe("activations.sources[src-app].configOverrides.start_at");
  });

  test("a filter whose conditions are for another signal is refused, naming the key (it would be inert)", () => {
    const c = raw("linear-logs");
    const node = c.pipelines[0]!.topology.nodes.find((n) => n.kind === "processor")!;
    node.processor = { type: "filter", config: { metrics: { metric: ['name == "x"'] } } };
    const p = bothRuntimes(c);
    expect(p.path).toBe(`pipelines[p-web].topology.nodes[${node.id}].processor.config.metrics`);
    expect(p.message).toContain("never run in a logs pipeline");
  });

  test("a processor that leads nowhere", () => {
    const c = raw("linear-logs");
    c.pipelines[0]!.topology.edges = c.pipelines[0]!.topology.edges.filter((e) => e.id !== "e3");
    expect(bothRuntimes(c)).toEqual({
      path: "pipelines[p-web].topology.nodes[batch]",
      message: "processor node 'batch' leads to no destination",
    });
  });
});

describe("Runtime R cannot run the debug destination", () => {
  /** linear-logs with its destination swapped for a debug one. */
  function withDebug() {
    const c = raw("linear-logs");
    c.destinations.push({ id: "dst-debug", name: "Debug", type: "debug", config: {} });
    c.activations!.destinations.push({ destinationId: "dst-debug", configOverrides: {}, tags: {} });
    c.pipelines[0]!.topology.nodes.find((n) => n.id === "out")!.ref = "dst-debug";
    return c;
  }

  test("an Alloy render refuses it by the activation, saying why; the collector YAML keeps it", () => {
    const input = toInput(withDebug());
    expect(problem(() => renderAlloy(input))).toEqual({
      path: "activations.destinations[dst-debug]",
      message:
        "destination 'dst-debug' (debug) cannot run on Alloy (remote config): Alloy's debug exporter (otelcol.exporter.debug) is experimental, and Alloy loads only generally-available components by default",
    });
    expect(renderOtelcol(input)).toContain("debug/debug:");
  });

  test("a destination node without ref that would stand for an active debug destination is refused too", () => {
    const c = withDebug();
    c.pipelines[0]!.topology.nodes.find((n) => n.id === "out")!.ref = undefined;
    expect(problem(() => renderAlloy(toInput(c))).path).toBe("activations.destinations[dst-debug]");
  });

  test("a preview on Alloy leaves a destination node without ref unwired instead of standing in the debug exporter", () => {
    const c = loadCase("preview").preview!;
    const alloy = renderPipelinePreview(c.pipeline, c.sources, c.destinations, "alloy");
    expect(alloy).not.toMatch(/^otelcol\.exporter\.debug|otelcol\.exporter\.debug\.\w+\.input/m);
    expect(alloy).toContain('// Preview: destination node "check" has no ref and is left unwired');
    expect(renderPipelinePreview(c.pipeline, c.sources, c.destinations, "otelcol")).toContain("debug/preview:");
    const debug = byId([{ id: "dst-d", name: "D", type: "debug", config: {} }]);
    const pipeline = structuredClone(c.pipeline);
    pipeline.topology.nodes.find((n) => n.id === "loki")!.ref = "dst-d";
    expect(problem(() => renderPipelinePreview(pipeline, c.sources, debug, "alloy")).path).toBe("pipelines[p-mixed].topology.nodes[loki].ref");
  });
});

describe("plan", () => {
  test("routes of other collectors are left out", () => {
    const plan = planCollector(loadCase("metrics").input!);
    expect(plan.flows.map((f) => f.name)).toEqual(["metrics_host", "metrics_postgres_exporter"]);
  });

  test("sources with the same name get distinct names, by record id", () => {
    const c = raw("metrics");
    c.sources[1]!.name = "Host";
    const plan = planCollector(toInput(c));
    expect(plan.sources.map((s) => s.name)).toEqual(["host", "host_2"]);
    expect(new Set(plan.flows.flatMap((f) => f.processors.map((p) => p.name))).size).toBe(2);
  });

  test("a diamond becomes one pipeline per processor path, the shared processor listed in both", () => {
    const pipeline: PipelineRecord = {
      id: "p",
      name: "Diamond",
      signal: "logs",
      topology: {
        nodes: [
          { id: "in", kind: "source" },
          { id: "a", kind: "processor", processor: { type: "batch", config: {} } },
          { id: "b", kind: "processor", processor: { type: "batch", config: {} } },
          { id: "c", kind: "processor", processor: { type: "batch", config: {} } },
          { id: "out", kind: "destination" },
        ],
        edges: [
          { id: "1", source: "in", target: "a" },
          { id: "2", source: "in", target: "b" },
          { id: "3", source: "a", target: "c" },
          { id: "4", source: "b", target: "c" },
          { id: "5", source: "c", target: "out" },
        ],
      },
    };
    const [flow] = planPreview(pipeline, new Map(), new Map()).flows;
    expect(flow!.processors.map((p) => p.name)).toEqual(["diamond_preview_a", "diamond_preview_b", "diamond_preview_c"]);
    expect(linearPaths(flow!)).toEqual([
      { processors: ["diamond_preview_a", "diamond_preview_c"], exporters: ["preview"] },
      { processors: ["diamond_preview_b", "diamond_preview_c"], exporters: ["preview"] },
    ]);
    const yaml = renderPipelinePreview(pipeline, new Map(), new Map(), "otelcol");
    expect(yaml).toContain("logs/diamond_preview-1:");
    expect(yaml).toContain("logs/diamond_preview-2:");
    const alloy = renderPipelinePreview(pipeline, new Map(), new Map(), "alloy");
    expect(alloy.match(/^otelcol\.processor\.batch "diamond_preview_c"/gm)).toHaveLength(1);
  });
});

describe("preview problems", () => {
  const c = loadCase("preview").preview!;

  test("a referenced record that does not exist names the node", () => {
    expect(problem(() => renderPipelinePreview(c.pipeline, new Map(), c.destinations, "otelcol"))).toEqual({
      path: "pipelines[p-mixed].topology.nodes[files].ref",
      message: "source 'src-files' does not exist",
    });
    expect(problem(() => renderPipelinePreview(c.pipeline, c.sources, new Map(), "alloy")).path).toBe("pipelines[p-mixed].topology.nodes[loki].ref");
  });

  test("a referenced source of another signal", () => {
    const metrics = { ...c.pipeline, signal: "metrics" as const };
    expect(problem(() => renderPipelinePreview(metrics, c.sources, c.destinations, "otelcol")).message).toContain("does not produce metrics");
  });

  test("a processor whose config is invalid names its path", () => {
    const pipeline = structuredClone(c.pipeline);
    pipeline.topology.nodes.find((n) => n.id === "batch")!.processor!.config = { timeout: "later" };
    expect(problem(() => renderPipelinePreview(pipeline, c.sources, byId([...c.destinations.values()]), "otelcol")).path).toBe(
      "pipelines[p-mixed].topology.nodes[batch].processor.config.timeout",
    );
  });
});

describe("sensitive fields", () => {
  const SECRET = "0190a8c2-7b3e-7c41-9d2e-5f6a7b8c9d11";

  test("a secret renders as its marker, a host value natively, a value marked not secret as its text", () => {
    const plan = planCollector(loadCase("secrets").input!);
    const headers = Object.fromEntries(plan.destinations.map((d) => [d.name, d.config.headers]));
    expect(headers.backend).toEqual({ Authorization: `<secret:${SECRET}>`, "X-Api-Key": new HostEnvValue("BACKEND_API_KEY"), "X-Tenant": "team$blue" });
    expect((headers.backend as Record<string, unknown>)["X-Api-Key"]).toBeInstanceOf(HostEnvValue);
    // The collector's override wins as one value.
    expect(headers.archive).toEqual({ Authorization: "<secret:0190a8c2-7b3e-7c41-9d2e-5f6a7b8c9d14>" });
    expect(headers.mimir).toEqual({ Authorization: new HostEnvValue("MIMIR_TOKEN") });
    const yaml = renderOtelcol(loadCase("secrets").input!);
    expect(yaml).toContain(`Authorization: "<secret:${SECRET}>"`);
    expect(yaml).toContain('X-Api-Key: "${env:BACKEND_API_KEY}"');
    expect(yaml).toContain('X-Tenant: "team$$blue"');
    const alloy = renderAlloy(loadCase("secrets").input!);
    expect(alloy).toContain(`"Authorization" = "<secret:${SECRET}>"`);
    expect(alloy).toContain('"X-Api-Key"     = sys.env("BACKEND_API_KEY")');
    expect(alloy).toContain('"X-Tenant"      = "team$blue"');
  });

  test("a plaintext left in a record is refused at render, naming the record's path and what to do, never the value", () => {
    const c = raw("secrets");
    c.destinations.find((d) => d.id === "dst-backend")!.config.headers = { Authorization: "Bearer legacy-plaintext" };
    const input = toInput(c);
    for (const render of [() => renderOtelcol(input), () => renderAlloy(input)]) {
      const error = refused(render);
      expect(error.details).toEqual([{ path: "destinations[dst-backend].config.headers.Authorization", message: expect.stringContaining("plain text") }]);
      expect(error.message).toContain("commit");
      expect(error.message).toContain("committed again before publishing");
      expect(JSON.stringify({ message: error.message, details: error.details })).not.toContain("legacy-plaintext");
    }
  });

  test("a plaintext in a collector's overrides is named there; one the overrides replace is not rendered at all", () => {
    const c = raw("secrets");
    c.activations!.destinations.find((d) => d.destinationId === "dst-mimir")!.configOverrides = { headers: { Authorization: "Bearer legacy" } };
    expect(bothRuntimes(c).path).toBe("activations.destinations[dst-mimir].configOverrides.headers.Authorization");
    const replaced = raw("secrets");
    replaced.destinations.find((d) => d.id === "dst-archive")!.config.headers = { Authorization: "Bearer legacy" };
    expect(renderOtelcol(toInput(replaced))).not.toContain("legacy");
  });

  test("a preview renders secrets as markers and refuses a plaintext by the record's path", () => {
    const c = raw("secrets");
    const pipeline = c.pipelines.find((p) => p.id === "p-logs")!;
    pipeline.topology.nodes.find((n) => n.id === "out")!.ref = "dst-backend";
    const preview = renderPipelinePreview(pipeline, byId(c.sources), byId(c.destinations), "otelcol");
    expect(preview).toContain(`Authorization: "<secret:${SECRET}>"`);
    c.destinations.find((d) => d.id === "dst-backend")!.config.headers = { "X-Key": "plain" };
    expect(problem(() => renderPipelinePreview(pipeline, byId(c.sources), byId(c.destinations), "alloy")).path).toBe(
      "destinations[dst-backend].config.headers.X-Key",
    );
  });

  test("no processor has a sensitive field: the plan renders those of sources and destinations only", () => {
    expect(PROCESSOR_TYPES.filter((t) => hasSensitive(t.schema)).map((t) => t.type)).toEqual([]);
    expect(
      DESTINATION_TYPES.filter((t) => hasSensitive(t.schema))
        .map((t) => t.type)
        .sort(),
    ).toEqual(["loki", "otlp", "otlphttp", "prometheusremotewrite"]);
  });
});

describe("pipelines matched by attributes", () => {
  test("a route and a match of the same source and pipeline are one flow; the route's source must be active, the match's need not", () => {
    const c = raw("matched");
    const matchedOnly = planCollector(toInput(c));
    expect(matchedOnly.flows.map((f) => f.name)).toEqual(["fleet_system_logs"]);
    c.routes = [{ id: "r1", collectorId: "edge-9", sourceId: "src-sys", pipelineId: "p-fleet" }];
    const both = planCollector(toInput(c));
    expect(both.flows.map((f) => f.name)).toEqual(["fleet_system_logs"]);
    c.activations!.sources = [];
    expect(planCollector(toInput({ ...c, routes: [] })).sources[0]!.config.start_at).toBe("end");
    expect(bothRuntimes(c).path).toBe("routes[r1].sourceId");
  });

  test("a matched pipeline's destination needs no activation; an activation adds its overrides", () => {
    const c = raw("matched");
    c.activations!.destinations = [{ destinationId: "dst-gw", configOverrides: { endpoint: "gw-eu:4317" }, tags: {} }];
    expect(renderOtelcol(toInput(c))).toContain('endpoint: "gw-eu:4317"');
    expect(renderAlloy(toInput(c))).toContain('endpoint = "gw-eu:4317"');
  });

  test("a matched pipeline naming a missing source names the node", () => {
    const c = raw("matched");
    c.sources = [];
    const p = bothRuntimes(c);
    expect(p.path).toBe("pipelines[p-fleet].topology.nodes[in].ref");
    expect(p.message).toContain("source 'src-sys' does not exist");
  });

  test("a matched destination Alloy cannot run is refused on Alloy, named by its record when no activation names it", () => {
    const c = raw("matched");
    c.destinations[0] = { id: "dst-gw", name: "Gateway", type: "debug", config: {} };
    expect(renderOtelcol(toInput(c))).toContain("debug/gateway:");
    const p = problem(() => renderAlloy(toInput(c)));
    expect(p.path).toBe("destinations[dst-gw]");
    expect(p.message).toContain("cannot run on Alloy (remote config)");
  });
});
