/**
 * A status as a word with a shape and colour beside it (a collector's, or any
 * state that borrows one of their looks): the
 * text carries the meaning, so it does not depend on telling colours apart.
 */
const SYMBOLS: Record<string, string> = { online: "●", degraded: "▲", offline: "■", pending: "○" };

/**
 * `status` picks the look (`status-<status>`) and, unless `symbol` is given,
 * the shape; `label` is the word shown (the status itself by default).
 */
export function StatusBadge({ status, label = status, symbol }: { status: string; label?: string; symbol?: string }) {
  return (
    <span className={`status status-${status}`}>
      <span aria-hidden="true" className="status-symbol">
        {symbol ?? SYMBOLS[status] ?? "●"}
      </span>
      {label}
    </span>
  );
}
