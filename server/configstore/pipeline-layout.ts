/**
 * Where a pipeline's boxes sit on the editor's canvas is layout, not
 * configuration: positions live in a per-pipeline layout document in the
 * store (collection `pipeline-layouts`), outside the git tree, so moving a
 * box is no pending change. The git record keeps only the positions it
 * already had (graphs saved before this split stay readable and unchanged);
 * reads lay the stored positions over it.
 */
import type { PipelineRecord, Topology, TopologyNode } from "../../shared/config-records.ts";
import type { WriteOp } from "../store/store.ts";

export const LAYOUTS = "pipeline-layouts";

export interface PipelineLayout {
  positions: Record<string, { x: number; y: number }>;
}

/**
 * The graph as git stores it (each node's position as the git record `before`
 * had it, or none) and the layout document with every position `topology` has.
 */
export function splitLayout(topology: Topology, before: Topology | undefined): { topology: Topology; layout: PipelineLayout } {
  const old = new Map((before?.nodes ?? []).map((n) => [n.id, n.position]));
  const positions: PipelineLayout["positions"] = {};
  const nodes = topology.nodes.map(({ position, ...node }): TopologyNode => {
    if (position) positions[node.id] = position;
    const kept = old.get(node.id);
    return kept ? { ...node, position: kept } : node;
  });
  return { topology: { ...topology, nodes }, layout: { positions } };
}

/** The pipeline as the API shows it: the layout's positions over the git record's. */
export function withLayout(pipeline: PipelineRecord, layout: PipelineLayout | undefined): PipelineRecord {
  if (!layout) return pipeline;
  const nodes = pipeline.topology.nodes.map((n) => {
    const at = layout.positions[n.id];
    return at ? { ...n, position: at } : n;
  });
  return { ...pipeline, topology: { ...pipeline.topology, nodes } };
}

export function putLayout(id: string, layout: PipelineLayout): WriteOp {
  return { op: "put", collection: LAYOUTS, id, data: layout };
}
