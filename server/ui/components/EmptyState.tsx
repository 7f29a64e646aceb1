/**
 * What an empty list shows under its count: what the things it lists are
 * for and the next step to take, with the control that takes it.
 */
import type { ReactNode } from "react";

export function EmptyState({ title, children, actions }: { title: string; children: ReactNode; actions?: ReactNode }) {
  return (
    <div className="empty-state">
      <h2>{title}</h2>
      <p>{children}</p>
      {actions && <div className="empty-actions">{actions}</div>}
    </div>
  );
}
