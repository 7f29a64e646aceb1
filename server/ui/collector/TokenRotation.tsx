/**
 * The collector's own token (Bearer for remote config and /v1/metrics; an
 * OpAMP collector's own metrics carry a separate metrics credential, which
 * rotating this token leaves as it is).
 * Rotating mints a new one and revokes the old in the same write, so the
 * page asks first, then shows the new token once, with the warning that the
 * collector stops authenticating until its config holds the new token.
 */
import { useState } from "react";
import { api } from "../client.ts";
import { useAction } from "../action.ts";
import { ErrorMessage } from "../components/ErrorMessage.tsx";
import { CopyButton } from "../components/CopyButton.tsx";
import type { Collector } from "../../../shared/collectors.ts";
import type { CollectorToken } from "../../../shared/enrollment.ts";

export function TokenRotationSection({ collector }: { collector: Collector }) {
  const [minted, setMinted] = useState<CollectorToken | null>(null);
  const { busy, error, run } = useAction();

  function rotate() {
    if (!window.confirm(`Mint a new token for ${collector.name}? Its current token stops working at once.`)) return;
    setMinted(null);
    run(() => api.post("/collectors/{id}/otlp-token", { params: { id: collector.id } }), setMinted);
  }

  return (
    <section className="detail-block" aria-labelledby="token-title">
      <h2 id="token-title">Collector token</h2>
      <p className="muted">
        {collector.managementMode === "opamp"
          ? "Sent as connection settings to an OpAMP agent that takes them. The collector's own metrics carry a separate metrics credential, which rotating this token leaves as it is: the collector keeps running."
          : "The remotecfg bearer_token and the own-metrics push Authorization header."}
      </p>
      <button type="button" className="button" disabled={busy} onClick={rotate}>
        Rotate token
      </button>
      <ErrorMessage error={error} />
      {minted && (
        <div className="snippet">
          <label htmlFor="new-token">New collector token</label>
          <input id="new-token" className="token-box" readOnly spellCheck={false} value={minted.token} onFocus={(event) => event.currentTarget.select()} />
          <CopyButton text={minted.token} />
          <p className="note" role="note">
            Shown once. The previous token no longer works: put this one in the collector's config now
            {collector.managementMode === "rcfg-remotecfg" ? " (remotecfg.bearer_token and the metrics exporter's Authorization header) and restart it." : "."}
          </p>
        </div>
      )}
    </section>
  );
}
