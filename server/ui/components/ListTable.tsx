/**
 * The UI's one list table: a keyboard-scrollable region (so a wide table
 * scrolls on a phone, not the page) named like the table, by its caption
 * (visually hidden unless asked) or by a heading elsewhere, a plain header
 * row and an optional row-actions column whose header only screen readers see.
 * Columns of numbers are right-aligned (their cells carry the `num` class).
 */
import type { ReactNode } from "react";

interface ListTableProps {
  /** Names the table and its region: a caption with this id and text, hidden unless `visible`… */
  caption?: { id: string; text: ReactNode; visible?: boolean };
  /** …or the id of a visible heading that names it. */
  labelledBy?: string;
  /** Extra classes beside `list`. */
  className?: string;
  columns: readonly ReactNode[];
  /** Indices of the columns that hold numbers: their headers align right, over cells with className="num". */
  numeric?: readonly number[];
  /** Adds the row-actions column (its header is for screen readers only). */
  actions?: boolean;
  children: ReactNode;
}

export function ListTable({ caption, labelledBy, className, columns, numeric = [], actions = false, children }: ListTableProps) {
  return (
    <div className="table-scroll" role="region" aria-labelledby={caption?.id ?? labelledBy} tabIndex={0}>
      <table className={className ? `list ${className}` : "list"}>
        {caption && (
          <caption id={caption.id} className={caption.visible ? undefined : "visually-hidden"}>
            {caption.text}
          </caption>
        )}
        <thead>
          <tr>
            {columns.map((column, i) => (
              <th key={i} scope="col" className={numeric.includes(i) ? "num" : undefined}>
                {column}
              </th>
            ))}
            {actions && (
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}
