/** Pipeline graphs are checked against their signal when saved: a filter's conditions must be the pipeline's. */
import { expect, test } from "bun:test";
import { ValidationError } from "../errors.ts";
import { emptySnapshot } from "./layout.ts";
import type { TopologyInput } from "../../shared/config-records.ts";
import { validateTopology } from "./topology.ts";

function graph(config: Record<string, unknown>): TopologyInput {
  return {
    nodes: [
      { id: "in", kind: "source" },
      { id: "drop", kind: "processor", processor: { type: "filter", config } },
      { id: "out", kind: "destination" },
    ],
    edges: [
      { id: "e1", source: "in", target: "drop" },
      { id: "e2", source: "drop", target: "out" },
    ],
  };
}

test("a filter whose conditions are for another signal is refused at save, naming the key", () => {
  let thrown: unknown;
  try {
    validateTopology(graph({ metrics: { metric: ['name == "x"'] } }), "logs", emptySnapshot());
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(ValidationError);
  expect((thrown as ValidationError).details).toEqual([
    {
      path: "topology.nodes[1].processor.config.metrics",
      message: 'node "drop": holds metrics conditions, which never run in a logs pipeline; use logs conditions or move them to a metrics pipeline',
    },
  ]);
  expect(validateTopology(graph({ metrics: { metric: ['name == "x"'] } }), "metrics", emptySnapshot()).nodes[1]!.processor!.type).toBe("filter");
});
