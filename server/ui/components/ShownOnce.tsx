/**
 * A secret the server answers once (an invite or reset link, a token): in a
 * read-only box that selects itself on focus, with Copy and a warning that
 * it will not be shown again, because the server keeps only its digest.
 */
import type { ReactNode } from "react";
import { CopyButton } from "./CopyButton.tsx";

export function ShownOnce({ id, label, value, children }: { id: string; label: string; value: string; children: ReactNode }) {
  return (
    <div className="snippet shown-once">
      <label htmlFor={id}>{label}</label>
      <textarea
        id={id}
        className="snippet-box"
        readOnly
        rows={2}
        spellCheck={false}
        value={value}
        aria-describedby={`${id}-warning`}
        onFocus={(event) => event.currentTarget.select()}
      />
      <div className="snippet-actions">
        <CopyButton text={value} />
      </div>
      <p id={`${id}-warning`} className="note">
        {children}
      </p>
    </div>
  );
}
