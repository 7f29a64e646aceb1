/**
 * A collector's status as a word with a shape and colour beside it: the
 * text carries the meaning, so it does not depend on telling colours apart.
 */
const SYMBOLS: Record<string, string> = { online: "●", degraded: "▲", offline: "■", pending: "○" };

export function StatusBadge({ status }: { status: string }) {
  return (
    <span className={`status status-${status}`}>
      <span aria-hidden="true" className="status-symbol">
        {SYMBOLS[status] ?? "●"}
      </span>
      {status}
    </span>
  );
}
