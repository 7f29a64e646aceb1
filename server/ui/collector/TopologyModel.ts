/**
 * How the collector page finds a topology node's live rates: the renderer
 * (server/render/plan.ts, names.ts) names receivers `<type>/<source>`,
 * exporters `<type>/<destination>` and each flow's processors
 * `<type>/<pipeline>_<source>_<node>`, from identifiers of the records' names,
 * with `_2`, `_3`, … on a clash. Also the processor chain in flow order.
 */
import type { Topology, TopologyNode } from "../../../shared/config-records.ts";
import type { Throughput } from "./types.ts";

export interface Rates {
  /** The component as kind:id:signal. */
  key: string;
  in: number | null;
  out: number | null;
  errors: number | null;
}

/** `"Nginx access-logs"` → `nginx_access_logs`, as server/render/names.ts (without its Alloy-keyword suffix). */
export function ident(text: string): string {
  const name = text
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "");
  return /^[0-9]/.test(name) ? `_${name}` : name;
}

/** A processor node's rendered name in the flow of `pipeline` and `source`. */
export const processorName = (pipeline: string, source: string, nodeId: string) => ident(`${ident(`${pipeline} ${ident(source)}`)} ${nodeId}`);

/**
 * The component of this kind and signal named `name` (or a clash-suffixed `name_N`)
 * after its `<type>/`, as the server's per-flow rates match them (server/telemetry/routes.ts).
 */
export function matchComponent(
  components: Throughput["components"],
  kind: "receiver" | "processor" | "exporter",
  signal: string,
  name: string,
): Rates | undefined {
  const candidates = components.filter((x) => x.kind === kind && x.signal === signal);
  const nameOf = (id: string) => id.slice(id.indexOf("/") + 1);
  const c =
    candidates.find((x) => nameOf(x.id) === name) ??
    candidates.find((x) => nameOf(x.id).startsWith(`${name}_`) && /^\d+$/.test(nameOf(x.id).slice(name.length + 1)));
  return c && { key: `${c.kind}:${c.id}:${c.signal}`, in: c.in, out: c.out, errors: c.errors };
}

/** The processor nodes reachable from the source nodes, in flow order (edges first to last). */
export function processorChain(topology: Topology): TopologyNode[] {
  const nodes = new Map(topology.nodes.map((n) => [n.id, n]));
  const next = (id: string) =>
    topology.edges
      .filter((e) => e.source === id)
      .map((e) => nodes.get(e.target)!)
      .filter((n) => n?.kind === "processor");
  const reachable = new Set<string>();
  const stack = topology.nodes.filter((n) => n.kind === "source").map((n) => n.id);
  while (stack.length > 0) for (const n of next(stack.pop()!)) if (!reachable.has(n.id)) reachable.add(n.id), stack.push(n.id);
  // Kahn's order over the reachable processors.
  const indegree = new Map([...reachable].map((id) => [id, 0]));
  for (const e of topology.edges) if (reachable.has(e.source) && reachable.has(e.target)) indegree.set(e.target, indegree.get(e.target)! + 1);
  const order: TopologyNode[] = [];
  const ready = [...reachable].filter((id) => indegree.get(id) === 0);
  while (ready.length > 0) {
    const id = ready.shift()!;
    order.push(nodes.get(id)!);
    for (const n of next(id)) if (reachable.has(n.id) && indegree.set(n.id, indegree.get(n.id)! - 1).get(n.id) === 0) ready.push(n.id);
  }
  return order;
}
