/**
 * Edits of a pipeline graph as pure functions over the API's Topology, so
 * the canvas, the node list and the processor chain make the same changes
 * and the server sees exactly what the screen shows. Ids are readable
 * (`app-logs`, `filter-2`, `app-logs-to-filter-2`) because the API names
 * nodes and edges by id in its problems.
 */
import type { ApiError } from "../api.ts";
import type { NodeKind, Problems, Signal, Topology, TopologyEdge, TopologyNode } from "./types.ts";

const ID_LIMIT = 90;

/** A readable id from `base` that no node or edge in `taken` uses yet. */
export function uniqueId(base: string, taken: ReadonlySet<string>): string {
  const slug =
    base
      .toLowerCase()
      .replace(/[^a-z0-9_.-]+/g, "-")
      .replace(/^[^a-z0-9]+|-+$/g, "")
      .slice(0, ID_LIMIT) || "node";
  if (!taken.has(slug)) return slug;
  for (let n = 2; ; n++) if (!taken.has(`${slug}-${n}`)) return `${slug}-${n}`;
}

function takenIds(topology: Topology): Set<string> {
  return new Set([...topology.nodes.map((n) => n.id), ...topology.edges.map((e) => e.id)]);
}

/** The edge from `source` to `target`, unless one exists already. */
export function connect(topology: Topology, source: string, target: string): Topology {
  if (topology.edges.some((e) => e.source === source && e.target === target)) return topology;
  const id = uniqueId(`${source}-to-${target}`, takenIds(topology));
  return { ...topology, edges: [...topology.edges, { id, source, target }] };
}

export function removeNodes(topology: Topology, ids: ReadonlySet<string>): Topology {
  return {
    nodes: topology.nodes.filter((n) => !ids.has(n.id)),
    edges: topology.edges.filter((e) => !ids.has(e.source) && !ids.has(e.target)),
  };
}

export function removeEdges(topology: Topology, ids: ReadonlySet<string>): Topology {
  return { ...topology, edges: topology.edges.filter((e) => !ids.has(e.id)) };
}

const COLUMN = 240;
const ROW = 110;

/** Where a new node goes when no pointer says: its kind's column, in the first free row. */
export function placeNew(topology: Topology, kind: NodeKind): { x: number; y: number } {
  const xs = (k: NodeKind) => topology.nodes.filter((n) => n.kind === k).map((n) => n.position?.x ?? 0);
  const processors = xs("processor");
  const destinations = xs("destination");
  const x =
    kind === "source"
      ? Math.min(0, ...xs("source"))
      : kind === "processor"
        ? (processors.length > 0 ? Math.max(...processors) : 0) + COLUMN
        : destinations.length > 0
          ? Math.max(...destinations)
          : Math.max(COLUMN, ...topology.nodes.map((n) => n.position?.x ?? 0)) + COLUMN;
  const taken = (y: number) => topology.nodes.some((n) => Math.abs((n.position?.x ?? 0) - x) < COLUMN / 2 && Math.abs((n.position?.y ?? 0) - y) < ROW / 2);
  let y = 0;
  while (taken(y)) y += ROW;
  return { x, y };
}

export function addNode(topology: Topology, node: Omit<TopologyNode, "id">, idBase: string): { topology: Topology; id: string } {
  const id = uniqueId(idBase, takenIds(topology));
  return { topology: { ...topology, nodes: [...topology.nodes, { ...node, id }] }, id };
}

/** The processors in flow order, or the node where they branch (then there is no one chain). */
export function processorChain(topology: Topology): { chain: TopologyNode[] } | { branchAt: string } {
  const byId = new Map(topology.nodes.map((n) => [n.id, n]));
  const isProcessor = (id: string) => byId.get(id)?.kind === "processor";
  const next = new Map<string, string[]>();
  const previous = new Map<string, string[]>();
  for (const e of topology.edges) {
    if (!isProcessor(e.source) || !isProcessor(e.target)) continue;
    next.set(e.source, [...(next.get(e.source) ?? []), e.target]);
    previous.set(e.target, [...(previous.get(e.target) ?? []), e.source]);
  }
  const processors = topology.nodes.filter((n) => n.kind === "processor");
  const branching = processors.find((n) => (next.get(n.id)?.length ?? 0) > 1 || (previous.get(n.id)?.length ?? 0) > 1);
  const heads = processors.filter((n) => !previous.has(n.id));
  if (branching) return { branchAt: branching.id };
  if (heads.length > 1) return { branchAt: heads[1]!.id };
  const chain: TopologyNode[] = [];
  const seen = new Set<string>();
  for (let node = heads[0]; node && !seen.has(node.id); node = byId.get(next.get(node.id)?.[0] ?? "")) {
    seen.add(node.id);
    chain.push(node);
  }
  // A cycle has no head; its processors are no chain either.
  if (chain.length < processors.length) return { branchAt: processors.find((n) => !seen.has(n.id))!.id };
  return { chain };
}

/** Edges whose ends changed get ids that say what they join. */
function renameEdges(edges: TopologyEdge[], before: TopologyEdge[]): TopologyEdge[] {
  const taken = new Set<string>();
  const result = edges.map((e, i) => {
    const old = before[i]!;
    if (old.source === e.source && old.target === e.target) {
      taken.add(e.id);
      return e;
    }
    return { ...e, id: "" };
  });
  return result.map((e) => {
    if (e.id !== "") return e;
    const id = uniqueId(`${e.source}-to-${e.target}`, taken);
    taken.add(id);
    return { ...e, id };
  });
}

/** Swaps two nodes' places in the flow (their edges and positions), e.g. to move a processor up the chain. */
export function swapNodes(topology: Topology, a: string, b: string): Topology {
  const swap = (id: string) => (id === a ? b : id === b ? a : id);
  const pa = topology.nodes.find((n) => n.id === a)?.position;
  const pb = topology.nodes.find((n) => n.id === b)?.position;
  const nodes = topology.nodes.map((n) => (n.id === a ? { ...n, position: pb } : n.id === b ? { ...n, position: pa } : n));
  const edges = topology.edges.map((e) => ({ ...e, source: swap(e.source), target: swap(e.target) }));
  return { nodes: nodes.map(({ position, ...n }) => (position ? { ...n, position } : n)), edges: renameEdges(edges, topology.edges) };
}

/** Removes a node and joins what flowed into it to what it fed, so the chain stays whole. */
export function bypassNode(topology: Topology, id: string): Topology {
  const into = topology.edges.filter((e) => e.target === id).map((e) => e.source);
  const out = topology.edges.filter((e) => e.source === id).map((e) => e.target);
  let result = removeNodes(topology, new Set([id]));
  for (const s of into) for (const t of out) result = connect(result, s, t);
  return result;
}

/**
 * Puts a processor at the end of the chain: after the last processor, or
 * between the sources and destinations when there is none yet.
 */
export function appendProcessor(topology: Topology, node: Omit<TopologyNode, "id">, idBase: string, last: TopologyNode | undefined): Topology {
  const position = last?.position ? { x: last.position.x + COLUMN, y: last.position.y } : placeNew(topology, "processor");
  // What sits in the new node's column or beyond moves one column right, so nothing is covered.
  const roomy = {
    ...topology,
    nodes: topology.nodes.map((n) =>
      n.position && n.position.x > position.x - COLUMN / 2 ? { ...n, position: { x: n.position.x + COLUMN, y: n.position.y } } : n,
    ),
  };
  const added = addNode(roomy, { ...node, position }, idBase);
  let result: Topology;
  if (last) {
    const moved = added.topology.edges.filter((e) => e.source === last.id && !isProcessorId(topology, e.target));
    result = removeEdges(added.topology, new Set(moved.map((e) => e.id)));
    result = connect(result, last.id, added.id);
    for (const e of moved) result = connect(result, added.id, e.target);
  } else {
    const kind = (id: string) => topology.nodes.find((n) => n.id === id)?.kind;
    const direct = added.topology.edges.filter((e) => kind(e.source) === "source" && kind(e.target) === "destination");
    result = removeEdges(added.topology, new Set(direct.map((e) => e.id)));
    for (const e of direct) result = connect(connect(result, e.source, added.id), added.id, e.target);
  }
  return result;
}

function isProcessorId(topology: Topology, id: string): boolean {
  return topology.nodes.find((n) => n.id === id)?.kind === "processor";
}

/** Where a filter keeps its conditions for each signal (the catalog's filter config). */
const FILTER_LISTS: Record<Signal, [string, string]> = {
  logs: ["logs", "log_record"],
  metrics: ["metrics", "metric"],
  traces: ["traces", "span"],
};

export function filterConditions(config: Record<string, unknown>, signal: Signal): string[] {
  const [group, list] = FILTER_LISTS[signal];
  const value = (config[group] as Record<string, unknown> | undefined)?.[list];
  return Array.isArray(value) ? value.filter((c): c is string => typeof c === "string") : [];
}

export function withFilterConditions(config: Record<string, unknown>, signal: Signal, conditions: string[]): Record<string, unknown> {
  const [group, list] = FILTER_LISTS[signal];
  return { ...config, [group]: { ...((config[group] as Record<string, unknown> | undefined) ?? {}), [list]: conditions } };
}

/**
 * Sorts an API error's details by the node or edge they name. Paths index
 * the topology that was sent (`topology.nodes[2].processor...` from
 * validation, `nodes[2].id` from the body schema), so `sent` must be it.
 */
export function pinProblems(error: ApiError | null, sent: Topology): Problems {
  const problems: Problems = { nodes: new Map(), edges: new Map(), other: [], configs: new Map() };
  if (!error) return problems;
  const add = (map: Map<string, string[]>, id: string, message: string) => map.set(id, [...(map.get(id) ?? []), message]);
  for (const detail of error.details) {
    const { path = "", message = JSON.stringify(detail) } = (detail ?? {}) as { path?: string; message?: string };
    const node = /(?:^|\.)nodes\[(\d+)\]/.exec(path);
    const edge = /(?:^|\.)edges\[(\d+)\]/.exec(path);
    const nodeId = node ? sent.nodes[Number(node[1])]?.id : undefined;
    const edgeId = edge ? sent.edges[Number(edge[1])]?.id : undefined;
    const config = /(?:^|\.)nodes\[\d+\]\.processor\.(config(?:[.[].*)?)$/.exec(path);
    if (nodeId !== undefined && config) problems.configs.set(nodeId, [...(problems.configs.get(nodeId) ?? []), { path: config[1]!, message }]);
    if (nodeId !== undefined) add(problems.nodes, nodeId, message);
    else if (edgeId !== undefined) add(problems.edges, edgeId, message);
    else problems.other.push(path ? `${path}: ${message}` : message);
  }
  return problems;
}

/**
 * Adds a node by click, placed and wired where it belongs: a processor goes
 * right after `after` (a selected source or processor, taking over its
 * outgoing edges) or at the end of the chain; a source feeds the first
 * processors (or the destinations when there are none); a destination is
 * fed by the last processors (or the sources).
 */
export function insertNode(topology: Topology, node: Omit<TopologyNode, "id">, idBase: string, after?: string): { topology: Topology; id: string } {
  const anchor = topology.nodes.find((n) => n.id === after && n.kind !== "destination");
  const before = new Set(topology.nodes.map((n) => n.id));
  const added = (t: Topology) => ({ topology: t, id: t.nodes.find((n) => !before.has(n.id))!.id });
  if (node.kind === "processor" && anchor) return added(insertAfter(topology, node, idBase, anchor));
  if (node.kind === "processor") {
    const order = processorChain(topology);
    return added(appendProcessor(topology, node, idBase, "chain" in order ? order.chain.at(-1) : undefined));
  }
  const kind = (id: string) => topology.nodes.find((n) => n.id === id)?.kind;
  const processors = topology.nodes.filter((n) => n.kind === "processor");
  const ofKind = (k: NodeKind) => topology.nodes.filter((n) => n.kind === k).map((n) => n.id);
  const result = addNode(topology, { ...node, position: placeNew(topology, node.kind) }, idBase);
  let t = result.topology;
  if (node.kind === "source") {
    const heads = processors.filter((p) => !topology.edges.some((e) => e.target === p.id && kind(e.source) === "processor")).map((p) => p.id);
    for (const target of processors.length > 0 ? heads : ofKind("destination")) t = connect(t, result.id, target);
  } else {
    const tails = processors.filter((p) => !topology.edges.some((e) => e.source === p.id && kind(e.target) === "processor")).map((p) => p.id);
    for (const source of processors.length > 0 ? tails : ofKind("source")) t = connect(t, source, result.id);
  }
  return { topology: t, id: result.id };
}

/** A processor right after `anchor`: one column to its right (what stood there moves on), taking over its outgoing edges. */
function insertAfter(topology: Topology, node: Omit<TopologyNode, "id">, idBase: string, anchor: TopologyNode): Topology {
  const from = anchor.position ?? { x: 0, y: 0 };
  const position = { x: from.x + COLUMN, y: from.y };
  const roomy = {
    ...topology,
    nodes: topology.nodes.map((n) =>
      n.position && n.position.x > from.x + COLUMN / 2 ? { ...n, position: { x: n.position.x + COLUMN, y: n.position.y } } : n,
    ),
  };
  const added = addNode(roomy, { ...node, position }, idBase);
  const moved = added.topology.edges.filter((e) => e.source === anchor.id);
  let result = removeEdges(added.topology, new Set(moved.map((e) => e.id)));
  result = connect(result, anchor.id, added.id);
  for (const e of moved) result = connect(result, added.id, e.target);
  return result;
}
