/** The REST steps every channel test needs before a publish: one source, destination and pipeline, routed onto collectors. */
type Call = <T = Record<string, unknown>>(path: string, method?: string, json?: unknown) => Promise<T>;

/** Source, destination and pipeline once; returns a function that routes a collector through them. */
export async function deploymentKit(call: Call) {
  const source = await call<{ id: string }>("/sources", "POST", { name: "app logs", type: "filelog", config: { include: ["/var/log/app/*.log"] } });
  const destination = await call<{ id: string }>("/destinations", "POST", {
    name: "backend",
    type: "otlphttp",
    config: { endpoint: "https://otlp.example.com" },
  });
  const pipeline = await call<{ id: string }>("/pipelines", "POST", {
    name: "logs",
    signal: "logs",
    topology: {
      nodes: [
        { id: "in", kind: "source" },
        { id: "batch", kind: "processor", processor: { type: "batch", config: {} } },
        { id: "out", kind: "destination", ref: destination.id },
      ],
      edges: [
        { id: "e1", source: "in", target: "batch" },
        { id: "e2", source: "batch", target: "out" },
      ],
    },
  });
  return async (collectorId: string, include = "/var/log/app/*.log") => {
    await call(`/collectors/${collectorId}/sources`, "POST", { sourceId: source.id, configOverrides: { include: [include] } });
    await call(`/collectors/${collectorId}/destinations`, "POST", { destinationId: destination.id, configOverrides: {} });
    await call("/routes", "POST", { collectorId, sourceId: source.id, pipelineId: pipeline.id });
  };
}

/** A logs pipeline from one source straight to one destination that every collector `matchers` select runs (no route or activation). */
export function matchedPipeline(call: Call, name: string, sourceId: string, destinationId: string, matchers: string[]): Promise<{ id: string }> {
  return call<{ id: string }>("/pipelines", "POST", {
    name,
    signal: "logs",
    matchers,
    topology: {
      nodes: [
        { id: "in", kind: "source", ref: sourceId },
        { id: "out", kind: "destination", ref: destinationId },
      ],
      edges: [{ id: "e1", source: "in", target: "out" }],
    },
  });
}
