import { expect, test } from "bun:test";
import type { PipelineRecord, Topology } from "../../shared/config-records.ts";
import { splitLayout, withLayout } from "./pipeline-layout.ts";

const graph = (positions: Record<string, { x: number; y: number } | undefined>): Topology => ({
  nodes: Object.entries(positions).map(([id, position]) => ({ id, kind: id === "in" ? "source" : "destination", ...(position ? { position } : {}) })),
  edges: [{ id: "e", source: "in", target: "out" }],
});

test("positions go to the layout; git keeps only the ones it had", () => {
  const before = graph({ in: { x: 0, y: 0 }, out: undefined });
  const { topology, layout } = splitLayout(graph({ in: { x: 5, y: 5 }, out: { x: 300, y: 0 } }), before);
  expect(topology).toEqual(before);
  expect(layout.positions).toEqual({ in: { x: 5, y: 5 }, out: { x: 300, y: 0 } });
});

test("reads lay the layout over the git record, which stays readable without one", () => {
  const pipeline: PipelineRecord = { id: "p", name: "p", signal: "logs", topology: graph({ in: { x: 0, y: 0 }, out: undefined }) };
  expect(withLayout(pipeline, undefined)).toBe(pipeline);
  expect(withLayout(pipeline, { positions: { out: { x: 240, y: 0 } } }).topology).toEqual(graph({ in: { x: 0, y: 0 }, out: { x: 240, y: 0 } }));
});
