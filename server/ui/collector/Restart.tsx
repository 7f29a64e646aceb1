/**
 * Restarting an OpAMP collector from its page: the supervisor is sent the
 * restart command once (at once when it is connected, else with its next
 * message within 10 minutes). The page asks first, since the collector stops
 * receiving while it restarts.
 */
import { useState } from "react";
import { api } from "../client.ts";
import { ErrorMessage } from "../components/ErrorMessage.tsx";
import type { Collector } from "../../../shared/collectors.ts";
import { useAction } from "../action.ts";

export function RestartSection({ collector }: { collector: Collector }) {
  const { busy, error, run } = useAction();
  const [done, setDone] = useState<string | null>(null);
  const restart = () => {
    if (!window.confirm(`Restart the collector process of ${collector.name}? It stops receiving while it restarts.`)) return;
    setDone(null);
    run(
      () => api.post("/collectors/{id}/restart", { params: { id: collector.id } }),
      () => setDone("Restart requested: the supervisor restarts the collector when it gets the command."),
    );
  };
  return (
    <section className="detail-block" aria-labelledby="restart-title">
      <h2 id="restart-title">Restart</h2>
      <p className="muted">Restarts the collector process through its OpAMP supervisor; its config stays as it is.</p>
      <button type="button" className="button" disabled={busy} onClick={restart}>
        Restart collector
      </button>
      {done && <p role="status">{done}</p>}
      <ErrorMessage error={error} />
    </section>
  );
}
