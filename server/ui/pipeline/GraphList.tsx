/**
 * The graph without the canvas: every node and edge as a list, with the
 * problems the API pinned to each, delete buttons, and a form to connect
 * two nodes. It is how a screen reader or keyboard user reads and edits
 * the pipeline, and it says in words what the canvas shows in lines.
 */
import { useState, type FormEvent } from "react";
import { KIND_LABELS, nodeName } from "./describe.ts";
import type { EditorContext, Problems, Topology } from "./types.ts";

interface GraphListProps {
  topology: Topology;
  ctx: EditorContext;
  problems: Problems;
  canEdit: boolean;
  onDeleteNode: (id: string) => void;
  onDeleteEdge: (id: string) => void;
  onConnect: (source: string, target: string) => void;
}

export function GraphList({ topology, ctx, problems, canEdit, onDeleteNode, onDeleteEdge, onConnect }: GraphListProps) {
  const name = (id: string) => {
    const node = topology.nodes.find((n) => n.id === id);
    return node ? nodeName(node, ctx) : id;
  };
  return (
    <section className="detail-block graph-list" aria-labelledby="graph-list-title">
      <h2 id="graph-list-title">Nodes and edges</h2>
      <div className="graph-list-columns">
        <div>
          <h3 id="node-list-title">Nodes ({topology.nodes.length})</h3>
          {topology.nodes.length === 0 ? (
            <p className="muted">No nodes yet.</p>
          ) : (
            <ul className="plain graph-items" aria-labelledby="node-list-title">
              {topology.nodes.map((node) => (
                <li key={node.id}>
                  <span>
                    <span className="muted">{KIND_LABELS[node.kind]}</span> {nodeName(node, ctx)}
                  </span>
                  {canEdit && (
                    <button type="button" className="button small" aria-label={`Delete node ${node.id}`} onClick={() => onDeleteNode(node.id)}>
                      Delete
                    </button>
                  )}
                  <PinnedProblems messages={problems.nodes.get(node.id)} />
                </li>
              ))}
            </ul>
          )}
        </div>
        <div>
          <h3 id="edge-list-title">Edges ({topology.edges.length})</h3>
          {topology.edges.length === 0 ? (
            <p className="muted">No edges yet.</p>
          ) : (
            <ul className="plain graph-items" aria-labelledby="edge-list-title">
              {topology.edges.map((edge) => (
                <li key={edge.id}>
                  <span>
                    {name(edge.source)} → {name(edge.target)}
                  </span>
                  {canEdit && (
                    <button type="button" className="button small" aria-label={`Delete edge ${edge.id}`} onClick={() => onDeleteEdge(edge.id)}>
                      Delete
                    </button>
                  )}
                  <PinnedProblems messages={problems.edges.get(edge.id)} />
                </li>
              ))}
            </ul>
          )}
          {canEdit && topology.nodes.length > 1 && <ConnectForm topology={topology} name={name} onConnect={onConnect} />}
        </div>
      </div>
    </section>
  );
}

export function PinnedProblems({ messages }: { messages: string[] | undefined }) {
  if (!messages || messages.length === 0) return null;
  return (
    <ul className="pinned-problems">
      {messages.map((message, i) => (
        <li key={i}>
          <span aria-hidden="true">⚠ </span>
          {message}
        </li>
      ))}
    </ul>
  );
}

function ConnectForm({ topology, name, onConnect }: { topology: Topology; name: (id: string) => string; onConnect: (source: string, target: string) => void }) {
  const froms = topology.nodes.filter((n) => n.kind !== "destination");
  const tos = topology.nodes.filter((n) => n.kind !== "source");
  const [from, setFrom] = useState("");
  const [to, setTo] = useState("");
  const source = froms.some((n) => n.id === from) ? from : (froms[0]?.id ?? "");
  const target = tos.some((n) => n.id === to) ? to : (tos[0]?.id ?? "");
  function onSubmit(event: FormEvent) {
    event.preventDefault();
    if (source !== "" && target !== "") onConnect(source, target);
  }
  return (
    <form className="filters connect-form" aria-label="Connect nodes" onSubmit={onSubmit}>
      <div className="field">
        <label htmlFor="connect-from">From</label>
        <select id="connect-from" value={source} onChange={(e) => setFrom(e.target.value)}>
          {froms.map((n) => (
            <option key={n.id} value={n.id}>
              {name(n.id)}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor="connect-to">To</label>
        <select id="connect-to" value={target} onChange={(e) => setTo(e.target.value)}>
          {tos.map((n) => (
            <option key={n.id} value={n.id}>
              {name(n.id)}
            </option>
          ))}
        </select>
      </div>
      <div className="filter-actions">
        <button type="submit" className="button" disabled={source === "" || target === ""}>
          Connect
        </button>
      </div>
    </form>
  );
}
