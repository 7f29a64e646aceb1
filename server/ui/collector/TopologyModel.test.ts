import { expect, test } from "bun:test";
import { ident, matchComponent, processorChain, processorName } from "./TopologyModel.ts";

test("names follow the renderer: identifiers of the records' names, processors per flow", () => {
  expect(ident("Nginx access-logs")).toBe("nginx_access_logs");
  expect(ident("1st")).toBe("_1st");
  expect(processorName("logs", "app logs", "batch")).toBe("logs_app_logs_batch");
});

test("a component is found by kind, signal and name after its type, or a clash-suffixed name", () => {
  const c = (id: string, kind: "receiver" | "processor" | "exporter", errors: number | null = null) => ({
    id,
    kind,
    signal: "logs" as const,
    in: 1,
    out: 1,
    errors,
  });
  const components = [c("filelog/app", "receiver"), c("otlphttp/backend_2", "exporter", 3), c("otlphttp/backend_eu", "exporter")];
  expect(matchComponent(components, "receiver", "logs", "app")?.key).toBe("receiver:filelog/app:logs");
  expect(matchComponent(components, "receiver", "metrics", "app")).toBeUndefined();
  expect(matchComponent(components, "exporter", "logs", "backend")).toMatchObject({ key: "exporter:otlphttp/backend_2:logs", errors: 3 });
  expect(matchComponent(components, "exporter", "logs", "backend_e")).toBeUndefined();
});

test("the processor chain runs from the source nodes in edge order, skipping unreachable ones", () => {
  const p = (id: string) => ({ id, kind: "processor" as const, processor: { type: "batch", config: {} } });
  const chain = processorChain({
    nodes: [p("b"), { id: "in", kind: "source" }, p("a"), p("orphan"), { id: "out", kind: "destination" }],
    edges: [
      { id: "1", source: "in", target: "a" },
      { id: "2", source: "a", target: "b" },
      { id: "3", source: "b", target: "out" },
    ],
  });
  expect(chain.map((n) => n.id)).toEqual(["a", "b"]);
});
