/**
 * The node palette: what can go on the canvas, grouped by kind. Each item
 * can be dragged onto the canvas (dropped where the pointer is) or pressed,
 * with a mouse or the keyboard, to add it in its kind's column.
 */
import { KIND_LABELS } from "./describe.ts";
import type { NodeKind, PaletteItem } from "./types.ts";

/** The drag payload's type: a palette item's key. */
export const PALETTE_MIME = "application/x-svc-palette-item";

const ORDER: NodeKind[] = ["source", "processor", "destination"];

export function Palette({ items, onAdd }: { items: Record<NodeKind, PaletteItem[]>; onAdd: (item: PaletteItem) => void }) {
  return (
    <section className="pipeline-palette" aria-labelledby="palette-title">
      <h2 id="palette-title">Add nodes</h2>
      <p className="hint">Drag onto the canvas, or press to add.</p>
      {ORDER.map((kind) => (
        <div key={kind} className="palette-group">
          <h3 id={`palette-${kind}`}>{KIND_LABELS[kind]}s</h3>
          <ul className="plain" aria-labelledby={`palette-${kind}`}>
            {items[kind].map((item) => (
              <li key={item.key}>
                <button
                  type="button"
                  className={`palette-item kind-${kind}`}
                  draggable
                  title={item.description}
                  aria-label={`Add ${KIND_LABELS[kind].toLowerCase()} ${item.label}`}
                  onDragStart={(event) => {
                    event.dataTransfer.setData(PALETTE_MIME, item.key);
                    event.dataTransfer.effectAllowed = "copy";
                  }}
                  onClick={() => onAdd(item)}
                >
                  <span className="palette-label">{item.label}</span>
                  <span className="palette-description">{item.description}</span>
                </button>
              </li>
            ))}
          </ul>
        </div>
      ))}
    </section>
  );
}
