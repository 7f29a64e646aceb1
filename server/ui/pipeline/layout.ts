/**
 * Auto-layout: layers left to right in the direction data flows. A node's
 * layer is the longest path to it from a node with no inputs; sources stay
 * in the first layer and destinations in the last, so every graph reads
 * source → processors → destination. Within a layer nodes keep their
 * current top-to-bottom order, so a re-layout moves things as little as it can.
 * Nodes in a cycle (which the API refuses) go after the rest.
 */
import type { Topology } from "./types.ts";

const LAYER_GAP = 240;
const ROW_GAP = 110;

export function autoLayout(topology: Topology): Topology {
  const layer = new Map<string, number>();
  const indegree = new Map(topology.nodes.map((n) => [n.id, 0]));
  const outgoing = new Map<string, string[]>(topology.nodes.map((n) => [n.id, []]));
  for (const e of topology.edges) {
    if (!indegree.has(e.source) || !indegree.has(e.target)) continue;
    outgoing.get(e.source)!.push(e.target);
    indegree.set(e.target, indegree.get(e.target)! + 1);
  }
  const queue = topology.nodes.filter((n) => indegree.get(n.id) === 0).map((n) => n.id);
  for (const id of queue) layer.set(id, 0);
  while (queue.length > 0) {
    const id = queue.shift()!;
    for (const next of outgoing.get(id)!) {
      layer.set(next, Math.max(layer.get(next) ?? 0, layer.get(id)! + 1));
      indegree.set(next, indegree.get(next)! - 1);
      if (indegree.get(next) === 0) queue.push(next);
    }
  }
  const deepest = Math.max(0, ...layer.values());
  const place = (id: string, kind: string) => {
    if (kind === "source") return 0;
    if (!layer.has(id)) return deepest + 1;
    if (kind === "destination") return Math.max(deepest, 1);
    return layer.get(id)!;
  };
  const layers = new Map<number, Topology["nodes"]>();
  for (const node of topology.nodes) {
    const at = place(node.id, node.kind);
    layers.set(at, [...(layers.get(at) ?? []), node]);
  }
  const positions = new Map<string, { x: number; y: number }>();
  for (const [at, nodes] of layers) {
    const ordered = [...nodes].sort((a, b) => (a.position?.y ?? 0) - (b.position?.y ?? 0));
    ordered.forEach((n, row) => positions.set(n.id, { x: at * LAYER_GAP, y: row * ROW_GAP }));
  }
  return { ...topology, nodes: topology.nodes.map((n) => ({ ...n, position: positions.get(n.id)! })) };
}

/** True when some node has no saved position (a graph made through the API), so it needs a layout to be seen. */
export function needsLayout(topology: Topology): boolean {
  return topology.nodes.some((n) => !n.position);
}
