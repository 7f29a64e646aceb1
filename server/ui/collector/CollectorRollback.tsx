/**
 * The collector (the OpAMP supervisor, or Alloy) went back to an earlier
 * config on its own after its target failed. svc does not offer that target
 * again by itself, or a bad config would be re-sent in a loop; a writer can
 * ask for one more try once the cause is fixed on the host.
 */
import { api } from "../client.ts";
import { ErrorMessage } from "../components/ErrorMessage.tsx";
import { LastSeen } from "../components/LastSeen.tsx";
import { useAction } from "../action.ts";

export function CollectorRollbackNote({
  collectorId,
  rollback,
  canWrite,
  onDone,
}: {
  collectorId: string;
  rollback: { toSeq: number | null; at: string };
  canWrite: boolean;
  onDone: (message: string) => void;
}) {
  const { busy, error, run } = useAction();
  const retry = () =>
    run(
      () => api.post("/collectors/{id}/retry", { params: { id: collectorId } }),
      () => onDone("This config is offered to the collector again."),
    );
  const to = rollback.toSeq === null ? "an earlier config" : `#${rollback.toSeq}`;
  return (
    <div className="target-note target-note-failed" role="group" aria-label="Rolled back by the collector">
      <p>
        The collector went back to {to} after this config failed. It is not offered again until a new publish or a retry.{" "}
        <span className="muted">
          (Reported <LastSeen at={rollback.at} />
          .)
        </span>
      </p>
      {canWrite && (
        <button type="button" className="button" disabled={busy} onClick={retry}>
          Retry this config
        </button>
      )}
      <ErrorMessage error={error} />
    </div>
  );
}
