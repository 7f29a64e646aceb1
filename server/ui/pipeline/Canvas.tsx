/**
 * The topology canvas (React Flow): one card per node with its kind, name
 * and a badge when the API found problems with it; edges drawn from a
 * node's right handle to another's left one. Palette items dropped here
 * land under the pointer. Nodes are focusable; the Delete key removes the
 * selection. Read-only when the visitor may not edit. The same graph is
 * offered without the canvas by GraphList. A caption says where the graph
 * runs: on every collector the pipeline's matchers select, as drawn, or
 * (without matchers) only where a route attaches it.
 */
import "@xyflow/react/dist/style.css";
import {
  Background,
  Controls,
  Handle,
  Position,
  ReactFlow,
  useReactFlow,
  type Connection,
  type Edge,
  type EdgeChange,
  type Node,
  type NodeChange,
  type NodeProps,
} from "@xyflow/react";
import { useState, type DragEvent } from "react";
import { KIND_LABELS, nodeDetail, nodeName, nodeTitle } from "./describe.ts";
import type { Flow, FlowNode, NodeSpec } from "./draft.ts";
import { PALETTE_MIME } from "./Palette.tsx";
import { NodeRates, perSecond, type NodeRate } from "./LiveRates.tsx";
import type { EditorContext, PaletteItem, Problems } from "./types.ts";

type ShownNode = Node<NodeSpec & { title: string; detail: string; problems: string[]; rate?: NodeRate }, "pipeline">;

function PipelineNode({ id, data }: NodeProps<ShownNode>) {
  const count = data.problems.length;
  return (
    <div className={`pipeline-node kind-${data.kind}${count > 0 ? " has-problems" : ""}${data.rate?.rising ? " errors-rising" : ""}`}>
      {data.kind !== "source" && <Handle type="target" position={Position.Left} />}
      <span className="pipeline-node-kind">{KIND_LABELS[data.kind]}</span>
      <strong className="pipeline-node-title">{data.title}</strong>
      <span className="pipeline-node-detail">{data.detail}</span>
      <code className="pipeline-node-id">{id}</code>
      <NodeRates rate={data.rate} />
      {count > 0 && (
        <span className="pipeline-node-badge" title={data.problems.join("\n")}>
          <span aria-hidden="true">⚠ </span>
          {count} problem{count === 1 ? "" : "s"}
        </span>
      )}
      {data.kind !== "destination" && <Handle type="source" position={Position.Right} />}
    </div>
  );
}

const NODE_TYPES = { pipeline: PipelineNode };
/** About half a node card (11rem by 5rem), in screen pixels at zoom 1. */
const NODE_CENTRE = { x: 85, y: 40 };

interface CanvasProps {
  flow: Flow;
  ctx: EditorContext;
  problems: Problems;
  canEdit: boolean;
  /** The pipeline has matchers: its named sources and destinations run on the collectors they select, no activation needed. */
  matched: boolean;
  items: ReadonlyMap<string, PaletteItem>;
  onNodesChange: (changes: NodeChange<FlowNode>[]) => void;
  onEdgesChange: (changes: EdgeChange[]) => void;
  onConnect: (source: string, target: string) => void;
  onDropItem: (item: PaletteItem, position: { x: number; y: number }) => void;
  /** Live rates per node id, when shown. */
  rates?: ReadonlyMap<string, NodeRate>;
}

export function Canvas({ flow, ctx, problems, canEdit, matched, items, onNodesChange, onEdgesChange, onConnect, onDropItem, rates }: CanvasProps) {
  const { screenToFlowPosition } = useReactFlow();
  // Fit a saved graph into view once; an empty canvas keeps its viewport, so drops land where they are aimed.
  const [fitOnStart] = useState(flow.nodes.length > 0);
  const rateOf = (id: string): NodeRate | undefined => {
    if (!rates) return undefined;
    const own = rates.get(id);
    if (own) return own;
    // A destination whose exporter reported nothing: what its incoming edges carry.
    const incoming = flow.edges.filter((e) => e.target === id).map((e) => rates.get(e.source)?.out);
    if (incoming.length === 0 || incoming.every((v) => v === null || v === undefined)) return undefined;
    return { in: incoming.reduce<number>((a, b) => a + (b ?? 0), 0), out: null, errors: null, rising: false };
  };
  const nodes: ShownNode[] = flow.nodes.map((n) => {
    const node = { id: n.id, ...n.data };
    const pinned = problems.nodes.get(n.id) ?? [];
    const rate = rateOf(n.id);
    return {
      ...n,
      data: { ...n.data, title: nodeTitle(node, ctx), detail: nodeDetail(node, ctx), problems: pinned, ...(rate ? { rate } : {}) },
      ariaLabel: `${KIND_LABELS[n.data.kind]} ${nodeName(node, ctx)}${pinned.length > 0 ? `. Problems: ${pinned.join("; ")}` : ""}`,
    };
  });
  const edges: Edge[] = flow.edges.map((e) => {
    const pinned = problems.edges.get(e.id) ?? [];
    if (pinned.length > 0)
      return { ...e, label: `⚠ ${pinned.join("; ")}`, className: "has-problems", ariaLabel: `Edge ${e.id}. Problems: ${pinned.join("; ")}` };
    const carried = rates?.get(e.source)?.out;
    return carried === undefined
      ? { ...e, ariaLabel: `Edge ${e.id}` }
      : { ...e, label: perSecond(carried), className: "live", ariaLabel: `Edge ${e.id}: ${perSecond(carried)}` };
  });

  function onDragOver(event: DragEvent) {
    if (!canEdit || !event.dataTransfer.types.includes(PALETTE_MIME)) return;
    event.preventDefault();
    event.dataTransfer.dropEffect = "copy";
  }
  function onDrop(event: DragEvent) {
    const item = items.get(event.dataTransfer.getData(PALETTE_MIME));
    if (!canEdit || !item) return;
    event.preventDefault();
    // The card lands centred under the pointer.
    const at = screenToFlowPosition({ x: event.clientX - NODE_CENTRE.x, y: event.clientY - NODE_CENTRE.y });
    onDropItem(item, { x: Math.round(at.x), y: Math.round(at.y) });
  }

  return (
    <div className="pipeline-canvas-frame">
      <p id="canvas-reach" className="hint canvas-reach">
        {matched
          ? "Runs as drawn on every collector the matchers select: each named source and destination, with no activation or route per collector (an activation only adds that collector's overrides). “Any source” is fed only where a route attaches one; “Every active destination” is what each collector has activated."
          : "Runs only where a route attaches it to a source active on a collector, with the named destinations active there too. Give the pipeline matchers (below) to run it on every collector they select instead."}
      </p>
      <div className="pipeline-canvas" role="group" aria-label="Pipeline canvas" aria-describedby="canvas-hint canvas-reach">
        <p id="canvas-hint" className="visually-hidden">
          Tab to a node and press Enter to select it{canEdit ? "; Delete removes the selected nodes and edges" : ""}. The node and edge lists below hold the
          same graph.
        </p>
        <ReactFlow<ShownNode, Edge>
          nodes={nodes}
          edges={edges}
          nodeTypes={NODE_TYPES}
          // Changes name nodes by id; the draft applies them to its own nodes, which lack only the display fields.
          onNodesChange={onNodesChange as (changes: NodeChange<ShownNode>[]) => void}
          onEdgesChange={onEdgesChange}
          onConnect={(c: Connection) => onConnect(c.source, c.target)}
          onDragOver={onDragOver}
          onDrop={onDrop}
          nodesDraggable={canEdit}
          nodesConnectable={canEdit}
          deleteKeyCode={canEdit ? ["Delete", "Backspace"] : null}
          fitView={fitOnStart}
          // Opened at zoom 1 so node text stays readable (pipeline.css); a wide graph is panned, or fitted with the controls.
          fitViewOptions={{ minZoom: 1, maxZoom: 1 }}
          minZoom={0.2}
        >
          <Background />
          <Controls showInteractive={false} />
        </ReactFlow>
      </div>
    </div>
  );
}
