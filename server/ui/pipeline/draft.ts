/**
 * The editor's draft: the canvas's nodes and edges as React Flow holds them
 * (it keeps measured sizes and selection on the node objects, so they must
 * survive every edit), with the API's Topology derived from them. Edits from
 * panels are Topology → Topology functions (graph.ts); the canvas's own
 * changes (drag, select, Delete key) go through React Flow's helpers.
 */
import { applyEdgeChanges, applyNodeChanges, type Edge, type EdgeChange, type Node, type NodeChange } from "@xyflow/react";
import { useCallback, useMemo, useState } from "react";
import { autoLayout, needsLayout } from "./layout.ts";
import type { Topology, TopologyNode } from "./types.ts";

export type NodeSpec = Omit<TopologyNode, "id" | "position">;
export type FlowNode = Node<NodeSpec, "pipeline">;

export interface Flow {
  nodes: FlowNode[];
  edges: Edge[];
}

function toTopology({ nodes, edges }: Flow): Topology {
  return {
    // Field by field: the API refuses any other key, whatever React Flow keeps on the node.
    nodes: nodes.map(({ id, data: { kind, ref, processor }, position }) => ({
      id,
      kind,
      ...(ref !== undefined ? { ref } : {}),
      ...(processor !== undefined ? { processor } : {}),
      position: { x: Math.round(position.x), y: Math.round(position.y) },
    })),
    edges: edges.map((e) => ({ id: e.id, source: e.source, target: e.target })),
  };
}

/** The topology as flow nodes and edges, keeping what React Flow knows of nodes and edges that stay. */
function toFlow(topology: Topology, previous: Flow): Flow {
  const oldNodes = new Map(previous.nodes.map((n) => [n.id, n]));
  const oldEdges = new Map(previous.edges.map((e) => [e.id, e]));
  return {
    nodes: topology.nodes.map(({ id, position, ...data }) => ({
      ...oldNodes.get(id),
      id,
      type: "pipeline",
      position: position ?? oldNodes.get(id)?.position ?? { x: 0, y: 0 },
      data,
    })),
    edges: topology.edges.map(({ id, source, target }) => {
      const old = oldEdges.get(id);
      return old && old.source === source && old.target === target ? old : { id, source, target };
    }),
  };
}

/** A stable text for "has the graph changed", positions included (they are saved too). */
function topologyKey(topology: Topology): string {
  return JSON.stringify([
    topology.nodes.map((n) => [n.id, n.kind, n.ref ?? null, n.processor ?? null, n.position ?? null]),
    topology.edges.map((e) => [e.id, e.source, e.target]),
  ]);
}

const EMPTY: Flow = { nodes: [], edges: [] };

/** A graph as the editor first shows it: laid out when it has no positions (made through the API). */
function laidOut(topology: Topology): Topology {
  return needsLayout(topology) ? autoLayout(topology) : topology;
}

export function useDraft(initial: Topology) {
  const [start] = useState(() => laidOut(initial));
  const [flow, setFlow] = useState<Flow>(() => toFlow(start, EMPTY));
  const [savedKey, setSavedKey] = useState(() => topologyKey(toTopology(toFlow(start, EMPTY))));
  const topology = useMemo(() => toTopology(flow), [flow]);

  const update = useCallback((edit: (t: Topology) => Topology) => setFlow((f) => toFlow(edit(toTopology(f)), f)), []);
  const onNodesChange = useCallback((changes: NodeChange<FlowNode>[]) => setFlow((f) => ({ ...f, nodes: applyNodeChanges(changes, f.nodes) })), []);
  const onEdgesChange = useCallback((changes: EdgeChange[]) => setFlow((f) => ({ ...f, edges: applyEdgeChanges(changes, f.edges) })), []);
  /** After a save: the server's normalised graph becomes the draft and the baseline. */
  const saved = useCallback((t: Topology) => {
    setFlow((f) => toFlow(t, f));
    setSavedKey(topologyKey(t));
  }, []);
  /** Someone else's graph replaces the draft, whatever was edited: shown as if just opened. */
  const reset = useCallback((t: Topology) => {
    const next = laidOut(t);
    setFlow((f) => toFlow(next, f));
    setSavedKey(topologyKey(toTopology(toFlow(next, EMPTY))));
  }, []);

  /** Selects just the node `id` (none with null), as a click on it would. */
  const select = useCallback(
    (id: string | null) =>
      setFlow((f) => ({
        nodes: f.nodes.map((n) => (n.selected === (n.id === id) ? n : { ...n, selected: n.id === id })),
        edges: f.edges.map((e) => (e.selected ? { ...e, selected: false } : e)),
      })),
    [],
  );

  const selectedNodes = flow.nodes.filter((n) => n.selected).map((n) => n.id);
  const selectedEdges = flow.edges.filter((e) => e.selected).map((e) => e.id);
  const dirty = topologyKey(topology) !== savedKey;
  return { flow, topology, dirty, selectedNodes, selectedEdges, update, select, onNodesChange, onEdgesChange, saved, reset };
}
