/** Copies a text to the clipboard and says, in a live region, whether it worked. */
import { useEffect, useState } from "react";

export function CopyButton({ text, label = "Copy" }: { text: string; label?: string }) {
  const [copy, setCopy] = useState<"idle" | "copied" | "failed">("idle");
  useEffect(() => setCopy("idle"), [text]);
  function onCopy() {
    navigator.clipboard.writeText(text).then(
      () => setCopy("copied"),
      () => setCopy("failed"),
    );
  }
  return (
    <span className="copy-button">
      <button type="button" className="button" onClick={onCopy}>
        {label}
      </button>
      <span role="status" className="muted">
        {copy === "copied" ? "Copied" : copy === "failed" ? "Could not copy; select the text and copy it." : ""}
      </span>
    </span>
  );
}
