/**
 * Hostile pipeline graphs: random node and edge lists with cycles, dangling
 * edges, duplicate ids and self-loops, and graphs of 10,000 nodes (a
 * pipeline holds at most MAX_CHAIN_PROCESSORS processors, so the large ones
 * are sources and destinations; 10,000 processors are refused by count). The
 * validator answers a ValidationError naming problems per node or edge (or
 * accepts the graph), never anything else; over the API the same graphs are
 * 4xx, never a 500.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import fc from "fast-check";
import { emptySnapshot } from "../../server/configstore/layout.ts";
import type { TopologyInput } from "../../shared/config-records.ts";
import { validateTopology } from "../../server/configstore/topology.ts";
import { ValidationError } from "../../server/errors.ts";
import { MAX_CHAIN_PROCESSORS } from "../../server/ottl/processors.ts";
import { startTestServer, type TestServer } from "../harness.ts";

const ids = fc.constantFrom("a", "b", "c", "d", "e", "f", "in", "out", "x.y", "Z-1");
const kinds = fc.constantFrom("source", "processor", "destination") as fc.Arbitrary<"source" | "processor" | "destination">;
const graph: fc.Arbitrary<TopologyInput> = fc.record({
  nodes: fc.array(
    fc.record(
      {
        id: ids,
        kind: kinds,
        ref: fc.constantFrom("missing", "also-missing"),
        processor: fc.record({
          type: fc.constantFrom("filter", "batch", "nope", "attributes"),
          config: fc.constantFrom({}, { logs: { log_record: ["body ==", "true"] } }, { send_batch_size: -1 }),
        }),
      },
      { requiredKeys: ["id", "kind"] },
    ),
    { maxLength: 12 },
  ),
  edges: fc.array(fc.record({ id: fc.constantFrom("e1", "e2", "e3", "e4", "e5", "e6"), source: ids, target: ids }), { maxLength: 16 }),
}) as fc.Arbitrary<TopologyInput>;

function outcome(topology: TopologyInput): "valid" | string[] {
  try {
    validateTopology(topology, "logs", emptySnapshot());
    return "valid";
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    expect(error.details.length).toBeGreaterThan(0);
    for (const detail of error.details) {
      expect(detail.path).toMatch(/^topology(\.nodes\[\d+\]|\.edges\[\d+\]|\.edges)?/);
      expect(detail.message.length).toBeGreaterThan(0);
    }
    return error.details.map((d) => d.path);
  }
}

test("random graphs: accepted or a ValidationError with a path per problem", () => {
  fc.assert(
    fc.property(graph, (topology) => {
      outcome(topology);
    }),
    { numRuns: 300 },
  );
});

/** A chain source → p1 → … → destination of `n` nodes, valid unless `close` adds an edge back (a cycle). */
function chain(n: number, close = false): TopologyInput {
  const nodes: TopologyInput["nodes"] = [{ id: "n0", kind: "source" }];
  for (let i = 1; i < n - 1; i++) nodes.push({ id: `n${i}`, kind: "processor", processor: { type: "batch", config: {} } });
  nodes.push({ id: `n${n - 1}`, kind: "destination" });
  const edges = nodes.slice(1).map((node, i) => ({ id: `e${i}`, source: nodes[i]!.id, target: node.id }));
  if (close) edges.push({ id: "back", source: `n${n - 2}`, target: "n1" });
  return { nodes, edges };
}

/** `n` nodes as source → destination pairs: valid, and large without processors. */
function pairs(n: number): TopologyInput {
  const nodes: TopologyInput["nodes"] = [];
  const edges: TopologyInput["edges"] = [];
  for (let i = 0; i < n / 2; i++) {
    nodes.push({ id: `s${i}`, kind: "source" }, { id: `d${i}`, kind: "destination" });
    edges.push({ id: `e${i}`, source: `s${i}`, target: `d${i}` });
  }
  return { nodes, edges };
}

test("10,000 nodes: valid pairs, every edge dangling, every node looped are answered per node or edge; 10,000 processors are refused by count alone", () => {
  expect(outcome(pairs(10_000))).toBe("valid");
  const dangling = pairs(10_000);
  dangling.edges = dangling.edges.map((e, i) => ({ ...e, target: `ghost${i}` }));
  const answer = outcome(dangling);
  expect(Array.isArray(answer) && answer.filter((p) => p.endsWith(".target")).length).toBe(5_000);
  const loops = pairs(10_000);
  loops.edges = loops.nodes.map((n, i) => ({ id: `l${i}`, source: n.id, target: n.id }));
  expect((outcome(loops) as string[]).length).toBeGreaterThanOrEqual(10_000);

  expect(outcome(chain(MAX_CHAIN_PROCESSORS + 2))).toBe("valid");
  expect(outcome(chain(MAX_CHAIN_PROCESSORS + 2, true))).not.toBe("valid");
  expect(outcome(chain(10_000))).toEqual(["topology.nodes"]);
  expect(outcome(chain(10_000, true))).toEqual(["topology.nodes"]);
});

let server: TestServer;
let pipelineId: string;
beforeAll(async () => {
  server = await startTestServer();
  pipelineId = (await server.call<{ id: string }>("/pipelines", "POST", { name: "fuzz-topology", signal: "logs" })).id;
});
afterAll(() => server?.stop());

test("over the API: random graphs and 10,000 nodes are 4xx in the error shape, never a 500", async () => {
  const send = async (topology: TopologyInput) => {
    for (const path of [`/pipelines/${pipelineId}/topology`, `/pipelines/${pipelineId}/topology/preview`]) {
      const res = await server.api(path, { method: path.endsWith("preview") ? "POST" : "PUT", json: topology });
      const text = await res.text();
      if (res.status >= 500) throw new Error(`${path} → ${res.status} ${text.slice(0, 300)}`);
      if (res.status >= 400) expect(JSON.parse(text).error.message.length).toBeGreaterThan(0);
    }
  };
  await fc.assert(fc.asyncProperty(graph, send), { numRuns: 100 });
  await send(chain(10_000, true));
}, 30_000);
