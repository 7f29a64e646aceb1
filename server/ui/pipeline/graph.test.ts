/** The editor's graph edits and auto-layout, without a browser. */
import { describe, expect, test } from "bun:test";
import { ApiError } from "../api.ts";
import { appendProcessor, bypassNode, connect, insertNode, pinProblems, placeNew, processorChain, swapNodes, uniqueId } from "./graph.ts";
import { autoLayout } from "./layout.ts";
import type { Topology } from "./types.ts";

const filter = (condition: string) => ({ type: "filter", config: { logs: { log_record: [condition] } } });

/** source → a → b → dest, laid out in a row. */
function chainOfTwo(): Topology {
  return {
    nodes: [
      { id: "src", kind: "source", position: { x: 0, y: 0 } },
      { id: "a", kind: "processor", processor: filter("a"), position: { x: 240, y: 0 } },
      { id: "b", kind: "processor", processor: filter("b"), position: { x: 480, y: 0 } },
      { id: "dest", kind: "destination", position: { x: 720, y: 0 } },
    ],
    edges: [
      { id: "src-to-a", source: "src", target: "a" },
      { id: "a-to-b", source: "a", target: "b" },
      { id: "b-to-dest", source: "b", target: "dest" },
    ],
  };
}

const flow = (t: Topology) => t.edges.map((e) => `${e.source}>${e.target}`).sort();
const ids = (t: Topology) => new Set([...t.nodes.map((n) => n.id), ...t.edges.map((e) => e.id)]);

describe("ids", () => {
  test("are readable slugs the API accepts, numbered when taken", () => {
    expect(uniqueId("App Logs!", new Set())).toBe("app-logs");
    expect(uniqueId("app logs", new Set(["app-logs", "app-logs-2"]))).toBe("app-logs-3");
    expect(uniqueId("  ", new Set())).toBe("node");
    expect(uniqueId("x".repeat(200), new Set())).toHaveLength(90);
  });
});

describe("edits", () => {
  test("connect adds one edge per pair", () => {
    const t = connect(connect(chainOfTwo(), "src", "dest"), "src", "dest");
    expect(flow(t)).toEqual(["a>b", "b>dest", "src>a", "src>dest"]);
    expect(t.edges.at(-1)!.id).toBe("src-to-dest");
  });

  test("swapping two processors swaps their places in the flow and their positions", () => {
    const t = swapNodes(chainOfTwo(), "a", "b");
    expect(flow(t)).toEqual(["a>dest", "b>a", "src>b"]);
    expect(t.edges.map((e) => e.id)).toEqual(["src-to-b", "b-to-a", "a-to-dest"]);
    expect(t.nodes.find((n) => n.id === "a")!.position).toEqual({ x: 480, y: 0 });
    expect(processorChain(t)).toEqual({ chain: [t.nodes[2]!, t.nodes[1]!] });
  });

  test("a new node goes in its kind's column, in the first free row", () => {
    const t = chainOfTwo();
    expect(placeNew(t, "source")).toEqual({ x: 0, y: 110 });
    expect(placeNew(t, "processor")).toEqual({ x: 720, y: 110 });
    expect(placeNew(t, "destination")).toEqual({ x: 720, y: 110 });
    expect(placeNew({ nodes: [], edges: [] }, "destination")).toEqual({ x: 480, y: 0 });
  });

  test("bypassing a processor joins its neighbours", () => {
    const t = bypassNode(chainOfTwo(), "a");
    expect(flow(t)).toEqual(["b>dest", "src>b"]);
  });

  test("appending goes after the last processor and makes room", () => {
    const start = chainOfTwo();
    const t = appendProcessor(start, { kind: "processor", processor: filter("c") }, "filter", start.nodes[2]);
    expect(flow(t)).toEqual(["a>b", "b>filter", "filter>dest", "src>a"]);
    expect(t.nodes.find((n) => n.id === "filter")!.position).toEqual({ x: 720, y: 0 });
    expect(t.nodes.find((n) => n.id === "dest")!.position).toEqual({ x: 960, y: 0 });
  });

  test("the first processor splits every source → destination edge", () => {
    const start: Topology = {
      nodes: [
        { id: "s1", kind: "source" },
        { id: "s2", kind: "source" },
        { id: "d", kind: "destination" },
      ],
      edges: [
        { id: "s1-to-d", source: "s1", target: "d" },
        { id: "s2-to-d", source: "s2", target: "d" },
      ],
    };
    const t = appendProcessor(start, { kind: "processor", processor: filter("x") }, "filter", undefined);
    expect(flow(t)).toEqual(["filter>d", "s1>filter", "s2>filter"]);
    expect(ids(t).size).toBe(t.nodes.length + t.edges.length);
  });
});

describe("processor chain", () => {
  test("a branch between processors has no chain; one to a destination is fine", () => {
    expect(processorChain(connect(chainOfTwo(), "a", "dest"))).toHaveProperty("chain");
    const start = chainOfTwo();
    const t = connect({ ...start, nodes: [...start.nodes, { id: "c", kind: "processor", processor: filter("c") }] }, "a", "c");
    expect(processorChain(t)).toEqual({ branchAt: "a" });
  });
  test("two unconnected processors have none either", () => {
    const t = { ...chainOfTwo(), edges: [] };
    expect(processorChain(t)).toEqual({ branchAt: "b" });
  });
});

describe("problems", () => {
  test("are pinned to the node or edge their path indexes, in the graph that was sent", () => {
    const error = new ApiError(400, "validation_failed", "not valid", [
      { path: "topology.nodes[1].processor.config.logs.log_record[0]", message: "column 5: bad" },
      { path: "topology.nodes[2].processor.type", message: "unknown type" },
      { path: "edges[2].target", message: "unknown node" },
      { path: "topology.edges", message: "a cycle" },
      "plain text",
    ]);
    const pinned = pinProblems(error, chainOfTwo());
    expect([...pinned.nodes]).toEqual([
      ["a", ["column 5: bad"]],
      ["b", ["unknown type"]],
    ]);
    expect([...pinned.edges]).toEqual([["b-to-dest", ["unknown node"]]]);
    expect(pinned.other).toEqual(["topology.edges: a cycle", '"plain text"']);
    // Config problems again, from the processor down, for the form that shows them beside their field.
    expect([...pinned.configs]).toEqual([["a", [{ path: "config.logs.log_record[0]", message: "column 5: bad" }]]]);
  });
});

describe("auto-layout", () => {
  test("puts sources first, destinations last and processors by depth", () => {
    const start = chainOfTwo();
    const t = autoLayout({
      nodes: [...start.nodes.map(({ position: _, ...n }) => n), { id: "spare", kind: "source" }, { id: "sink", kind: "destination" }],
      edges: [...start.edges, { id: "src-to-sink", source: "src", target: "sink" }],
    });
    const at = Object.fromEntries(t.nodes.map((n) => [n.id, n.position]));
    expect(at).toEqual({
      src: { x: 0, y: 0 },
      spare: { x: 0, y: 110 },
      a: { x: 240, y: 0 },
      b: { x: 480, y: 0 },
      dest: { x: 720, y: 0 },
      sink: { x: 720, y: 110 },
    });
  });
});

describe("adding by click", () => {
  test("a processor goes right after the selected node, taking over its edges; what stood right of it moves on", () => {
    const { topology, id } = insertNode(chainOfTwo(), { kind: "processor", processor: filter("c") }, "filter", "a");
    expect(id).toBe("filter");
    expect(flow(topology)).toEqual(["a>filter", "b>dest", "filter>b", "src>a"]);
    const at = new Map(topology.nodes.map((n) => [n.id, n.position]));
    expect(at.get("filter")).toEqual({ x: 480, y: 0 });
    expect(at.get("b")).toEqual({ x: 720, y: 0 });
  });

  test("without a selection a processor ends the chain; a source feeds the first processor; a destination is fed by the last", () => {
    expect(flow(insertNode(chainOfTwo(), { kind: "processor", processor: filter("c") }, "filter").topology)).toEqual([
      "a>b",
      "b>filter",
      "filter>dest",
      "src>a",
    ]);
    expect(flow(insertNode(chainOfTwo(), { kind: "source" }, "more").topology)).toContain("more>a");
    expect(flow(insertNode(chainOfTwo(), { kind: "destination" }, "sink").topology)).toContain("b>sink");
  });

  test("with no processors, sources and destinations are wired to each other", () => {
    const lone: Topology = { nodes: [{ id: "src", kind: "source", position: { x: 0, y: 0 } }], edges: [] };
    expect(flow(insertNode(lone, { kind: "destination" }, "dest").topology)).toEqual(["src>dest"]);
  });
});
