/**
 * A state as a word with a shape and a tone beside it: the one way the UI
 * shows any state (a collector's, an audit outcome, a token's, a health
 * check's). The text carries the meaning, so it does not depend on telling
 * colours apart; the tone is one of five used the same way everywhere.
 */

/** ok: working as asked; warn: needs a look; error: broken or refused; info: a deliberate exception; neutral: not started or over. */
export type Tone = "ok" | "warn" | "error" | "info" | "neutral";

/** Each state its own shape, so a pinned, drifted or failed collector stands out from an online one without reading colour. */
const SYMBOLS: Record<string, string> = { online: "●", degraded: "▲", offline: "■", pending: "○", failed: "✕", pinned: "◆", drifted: "≠", unrenderable: "!" };

/** The tone of the states the UI shows; anything else is neutral unless the caller says. */
const TONES: Record<string, Tone> = {
  online: "ok",
  degraded: "warn",
  offline: "error",
  pending: "neutral",
  drifted: "warn",
  pinned: "info",
  failed: "error",
  unrenderable: "warn",
};

/**
 * `status` picks the look (`status-<status>`), the tone unless `tone` is
 * given and the shape unless `symbol` is; `label` is the word shown (the
 * status itself by default); `className` adds a page's own hook.
 */
export function StatusBadge({
  status,
  label = status,
  symbol,
  tone,
  className,
}: {
  status: string;
  label?: string;
  symbol?: string;
  tone?: Tone;
  className?: string;
}) {
  const classes = ["status", `status-${status.replace(/\s+/g, "-")}`, `tone-${tone ?? TONES[status] ?? "neutral"}`, className];
  return (
    <span className={classes.filter(Boolean).join(" ")}>
      <span aria-hidden="true" className="status-symbol">
        {symbol ?? SYMBOLS[status] ?? "●"}
      </span>
      {label}
    </span>
  );
}
