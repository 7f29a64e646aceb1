/**
 * Every problem the API found in the graph, in one list beside the canvas:
 * the badges on nodes say where, this says what, also to a screen reader.
 */
import { nodeName } from "./describe.ts";
import type { EditorContext, Problems, Topology } from "./types.ts";

export function ProblemList({ problems, topology, ctx }: { problems: Problems; topology: Topology; ctx: EditorContext }) {
  const name = (id: string) => {
    const node = topology.nodes.find((n) => n.id === id);
    return node ? `Node ${nodeName(node, ctx)}` : `Node ${id}`;
  };
  const entries = [
    ...[...problems.nodes].flatMap(([id, messages]) => messages.map((m) => `${name(id)}: ${m}`)),
    ...[...problems.edges].flatMap(([id, messages]) => messages.map((m) => `Edge ${id}: ${m}`)),
    ...problems.other,
  ];
  return (
    <section className="problem-list" aria-labelledby="problems-title" aria-live="polite">
      <h2 id="problems-title" className={entries.length === 0 ? "visually-hidden" : undefined}>
        Problems ({entries.length})
      </h2>
      {entries.length > 0 && (
        <ul>
          {entries.map((entry, i) => (
            <li key={i}>{entry}</li>
          ))}
        </ul>
      )}
    </section>
  );
}
