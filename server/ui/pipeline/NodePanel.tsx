/**
 * The selected node's settings, beside the canvas: what it is, its
 * processor settings (the same form as in the processor chain), its
 * problems, and Remove (a processor's neighbours are joined again).
 * Clicking a node opens it; Close or a click on the empty canvas closes it.
 */
import { KIND_LABELS, nodeDetail, nodeTitle } from "./describe.ts";
import { bypassNode, removeNodes } from "./graph.ts";
import { PinnedProblems } from "./GraphList.tsx";
import { ProcessorSettings } from "./ProcessorChain.tsx";
import { Link } from "../router.tsx";
import type { EditorContext, Problems, Topology, TopologyNode } from "./types.ts";

interface NodePanelProps {
  node: TopologyNode;
  ctx: EditorContext;
  problems: Problems;
  canEdit: boolean;
  update: (edit: (t: Topology) => Topology) => void;
  onClose: () => void;
}

export function NodePanel({ node, ctx, problems, canEdit, update, onClose }: NodePanelProps) {
  const title = nodeTitle(node, ctx);
  const isProcessor = node.kind === "processor";
  return (
    <section className="node-panel" aria-label={`Settings of ${node.id}`}>
      <div className="node-panel-head">
        <div>
          <span className="pipeline-node-kind">{KIND_LABELS[node.kind]}</span>
          <h2>{title}</h2>
          <code className="muted">{node.id}</code>
        </div>
        <button type="button" className="button small" aria-label="Close node settings" onClick={onClose}>
          ✕
        </button>
      </div>
      {isProcessor ? (
        <ProcessorSettings
          key={node.id}
          node={node}
          ctx={ctx}
          canEdit={canEdit}
          problems={problems}
          inPanel
          onChange={(processor) => update((t) => ({ ...t, nodes: t.nodes.map((n) => (n.id === node.id ? { ...n, processor } : n)) }))}
        />
      ) : (
        <>
          <p className="muted">{nodeDetail(node, ctx)}</p>
          <p className="hint">
            {node.ref === undefined
              ? "Stands for what each collector provides; it has no settings of its own."
              : `Its settings are the ${node.kind} record's, shared by every pipeline that names it.`}
          </p>
          {node.ref !== undefined && <Link href={`/ui/${node.kind}s`}>Edit {node.kind}s</Link>}
          <PinnedProblems messages={problems.nodes.get(node.id)} />
        </>
      )}
      {canEdit && (
        <button
          type="button"
          className="button"
          onClick={() => {
            update((t) => (isProcessor ? bypassNode(t, node.id) : removeNodes(t, new Set([node.id]))));
            onClose();
          }}
        >
          Remove {node.id}
        </button>
      )}
    </section>
  );
}
