/**
 * Structural rules of a pipeline graph, checked before it is saved or
 * rendered: edges join existing nodes, no cycles, sources only at the start,
 * destinations only at the end, every processor on a path from a source to a
 * destination, every reference and processor config valid for the pipeline's
 * signal. Each problem names the node or edge by id.
 */
import { findType, validateComponentConfig } from "../catalog/index.ts";
import { AppError, ValidationError, type ErrorDetail } from "../errors.ts";
import { checkChainSize, MAX_CHAIN_PROCESSORS } from "../ottl/processors.ts";
import type { Snapshot } from "./layout.ts";
import type { Signal, Topology, TopologyInput, TopologyNode } from "../../shared/config-records.ts";

/** Returns the topology with processor configs normalised (defaults applied); throws naming every problem. */
export function validateTopology(topology: TopologyInput, signal: Signal, snapshot: Snapshot, root = "topology"): Topology {
  const problems: ErrorDetail[] = [];
  const nodes = new Map<string, TopologyInput["nodes"][number]>();
  const normalised: TopologyNode[] = [];

  // Refused before any config is checked: parsing an oversized graph's conditions would hold the event loop.
  const processors = topology.nodes.flatMap((n) => (n.kind === "processor" && n.processor ? [{ type: n.processor.type, config: n.processor.config }] : []));
  if (processors.length > MAX_CHAIN_PROCESSORS) {
    const message = `holds ${processors.length} processor nodes; a pipeline may have at most ${MAX_CHAIN_PROCESSORS}`;
    throw new ValidationError(`The pipeline topology is not valid: ${message}.`, [{ path: `${root}.nodes`, message }]);
  }
  checkChainSize(processors, `${root}.nodes`);

  topology.nodes.forEach((node, i) => {
    const at = `${root}.nodes[${i}]`;
    if (nodes.has(node.id)) problems.push({ path: `${at}.id`, message: `node id "${node.id}" is used twice` });
    nodes.set(node.id, node);
    normalised.push(checkNode(node, at, signal, snapshot, problems));
  });

  const outgoing = new Map<string, string[]>([...nodes.keys()].map((id) => [id, []]));
  const incoming = new Map<string, number>([...nodes.keys()].map((id) => [id, 0]));
  const edgeIds = new Set<string>();
  const pairs = new Set<string>();
  topology.edges.forEach((edge, i) => {
    const at = `${root}.edges[${i}]`;
    if (edgeIds.has(edge.id)) problems.push({ path: `${at}.id`, message: `edge id "${edge.id}" is used twice` });
    edgeIds.add(edge.id);
    const from = nodes.get(edge.source);
    const to = nodes.get(edge.target);
    if (!from) problems.push({ path: `${at}.source`, message: `edge "${edge.id}" starts at unknown node "${edge.source}"` });
    if (!to) problems.push({ path: `${at}.target`, message: `edge "${edge.id}" ends at unknown node "${edge.target}"` });
    if (!from || !to) return;
    if (edge.source === edge.target) problems.push({ path: at, message: `edge "${edge.id}" joins node "${edge.source}" to itself` });
    if (to.kind === "source")
      problems.push({ path: `${at}.target`, message: `edge "${edge.id}" leads into source node "${to.id}"; sources only start a pipeline` });
    if (from.kind === "destination")
      problems.push({ path: `${at}.source`, message: `edge "${edge.id}" leaves destination node "${from.id}"; destinations only end a pipeline` });
    const pair = `${edge.source}\u0000${edge.target}`;
    if (pairs.has(pair)) problems.push({ path: at, message: `edge "${edge.id}" repeats ${edge.source} → ${edge.target}` });
    pairs.add(pair);
    outgoing.get(edge.source)!.push(edge.target);
    incoming.set(edge.target, incoming.get(edge.target)! + 1);
  });

  if (problems.length === 0) checkFlow(topology, nodes, outgoing, incoming, root, problems);
  if (problems.length > 0) {
    throw new ValidationError(`The pipeline topology is not valid: ${problems[0]!.message}.`, problems);
  }
  return { nodes: normalised, edges: topology.edges.map((e) => ({ id: e.id, source: e.source, target: e.target })) };
}

function checkNode(node: TopologyInput["nodes"][number], at: string, signal: Signal, snapshot: Snapshot, problems: ErrorDetail[]): TopologyNode {
  const clean: TopologyNode = { id: node.id, kind: node.kind };
  if (node.position) clean.position = node.position;
  if (node.kind === "processor") {
    if (!node.processor) {
      problems.push({ path: `${at}.processor`, message: `processor node "${node.id}" needs a processor {type, config}` });
      return clean;
    }
    if (node.ref !== undefined) problems.push({ path: `${at}.ref`, message: `processor node "${node.id}" cannot have a ref` });
    const type = findType("processor", node.processor.type);
    if (!type) {
      problems.push({ path: `${at}.processor.type`, message: `node "${node.id}": unknown processor type "${node.processor.type}"` });
      return clean;
    }
    if (!type.signals.includes(signal)) {
      problems.push({ path: `${at}.processor.type`, message: `node "${node.id}": processor "${type.type}" does not handle ${signal}` });
    }
    try {
      const config = validateComponentConfig("processor", type.type, node.processor.config ?? {}, `${at}.processor.config`);
      for (const detail of type.checkSignal?.(config as never, signal, `${at}.processor.config`) ?? []) {
        problems.push({ path: detail.path, message: `node "${node.id}": ${detail.message}` });
      }
      clean.processor = { type: type.type, config: config as Record<string, unknown> };
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      for (const detail of error.details.length ? error.details : [{ path: `${at}.processor.config`, message: error.message }]) {
        problems.push({ path: detail.path, message: `node "${node.id}": ${detail.message}` });
      }
    }
    return clean;
  }
  if (node.processor !== undefined) problems.push({ path: `${at}.processor`, message: `${node.kind} node "${node.id}" cannot have a processor` });
  if (node.ref !== undefined) {
    clean.ref = node.ref;
    const record = node.kind === "source" ? snapshot.sources.get(node.ref) : snapshot.destinations.get(node.ref);
    if (!record) {
      problems.push({ path: `${at}.ref`, message: `node "${node.id}": ${node.kind} ${node.ref} does not exist (no ${node.kind} has this id)` });
    } else if (!findType(node.kind, record.type)?.signals.includes(signal)) {
      problems.push({ path: `${at}.ref`, message: `node "${node.id}": ${node.kind} "${record.name}" (${record.type}) does not carry ${signal}` });
    }
  }
  return clean;
}

/** No cycles; every node lies on a path from a source to a destination. */
function checkFlow(
  topology: TopologyInput,
  nodes: Map<string, TopologyInput["nodes"][number]>,
  outgoing: Map<string, string[]>,
  incoming: Map<string, number>,
  root: string,
  problems: ErrorDetail[],
): void {
  const indegree = new Map(incoming);
  const queue = [...nodes.keys()].filter((id) => indegree.get(id) === 0);
  let visited = 0;
  while (queue.length > 0) {
    const id = queue.pop()!;
    visited++;
    for (const next of outgoing.get(id)!) {
      indegree.set(next, indegree.get(next)! - 1);
      if (indegree.get(next) === 0) queue.push(next);
    }
  }
  if (visited < nodes.size) {
    const inCycle = [...nodes.keys()].filter((id) => indegree.get(id)! > 0);
    problems.push({ path: `${root}.edges`, message: `the edges form a cycle through nodes ${inCycle.map((id) => `"${id}"`).join(", ")}` });
    return;
  }
  const reach = (starts: string[], next: (id: string) => string[]) => {
    const seen = new Set(starts);
    const stack = [...starts];
    while (stack.length > 0) for (const n of next(stack.pop()!)) if (!seen.has(n)) seen.add(n), stack.push(n);
    return seen;
  };
  const reverse = new Map<string, string[]>([...nodes.keys()].map((id) => [id, []]));
  for (const [from, tos] of outgoing) for (const to of tos) reverse.get(to)!.push(from);
  const fromSources = reach(
    [...nodes.values()].filter((n) => n.kind === "source").map((n) => n.id),
    (id) => outgoing.get(id)!,
  );
  const toDestinations = reach(
    [...nodes.values()].filter((n) => n.kind === "destination").map((n) => n.id),
    (id) => reverse.get(id)!,
  );
  topology.nodes.forEach((node, i) => {
    if (!fromSources.has(node.id)) problems.push({ path: `${root}.nodes[${i}]`, message: `node "${node.id}" is not reachable from any source` });
    else if (!toDestinations.has(node.id)) problems.push({ path: `${root}.nodes[${i}]`, message: `node "${node.id}" leads to no destination` });
  });
}

/**
 * The processors of a validated graph in flow order, for a dry-run. A graph
 * whose processors branch has no single chain, so it is refused by name.
 */
export function processorChain(topology: Topology): { nodeId: string; type: string; config: Record<string, unknown> }[] {
  const byId = new Map(topology.nodes.map((n) => [n.id, n]));
  const isProcessor = (id: string) => byId.get(id)?.kind === "processor";
  const next = new Map<string, string[]>();
  const previous = new Map<string, string[]>();
  for (const edge of topology.edges) {
    if (!isProcessor(edge.source) || !isProcessor(edge.target)) continue;
    next.set(edge.source, [...(next.get(edge.source) ?? []), edge.target]);
    previous.set(edge.target, [...(previous.get(edge.target) ?? []), edge.source]);
  }
  const processors = topology.nodes.filter((n) => n.kind === "processor");
  const branching = processors.find((n) => (next.get(n.id)?.length ?? 0) > 1 || (previous.get(n.id)?.length ?? 0) > 1);
  const heads = processors.filter((n) => !previous.has(n.id));
  if (branching || heads.length > 1) {
    const at = branching?.id ?? heads[1]!.id;
    throw new ValidationError(`The pipeline's processors branch at node "${at}", so there is no single chain; pass the processors to run.`, [
      { path: "processors", message: `required because the pipeline branches at node "${at}"` },
    ]);
  }
  const chain: { nodeId: string; type: string; config: Record<string, unknown> }[] = [];
  for (let node = heads[0]; node; node = byId.get(next.get(node.id)?.[0] ?? "")) {
    chain.push({ nodeId: node.id, type: node.processor!.type, config: node.processor!.config });
  }
  return chain;
}
