/**
 * A rollback pins the collector to the config it restored, and fleet
 * publishes pass it by until it is unpinned: the badge says who pinned it and
 * when, so nobody wonders why a publish did not reach it; writers can unpin.
 */
import { api } from "../client.ts";
import { ErrorMessage } from "../components/ErrorMessage.tsx";
import { LastSeen } from "../components/LastSeen.tsx";
import { useAction } from "../action.ts";
import { StatusBadge } from "../components/StatusBadge.tsx";

export function PinnedNote({
  collectorId,
  pinned,
  canWrite,
  onDone,
}: {
  collectorId: string;
  pinned: { at: string; actor: string };
  canWrite: boolean;
  onDone: (message: string) => void;
}) {
  const { busy, error, run } = useAction();
  const unpin = () =>
    run(
      () => api.delete("/collectors/{id}/pin", { params: { id: collectorId } }),
      () => onDone("Unpinned: the next fleet publish reaches this collector."),
    );
  return (
    <div className="target-note" role="group" aria-label="Pinned">
      <p>
        <StatusBadge status="pinned" label="Pinned" symbol="◆" /> by {pinned.actor}, <LastSeen at={pinned.at} />. Fleet publishes skip this collector until it
        is unpinned or a publish names it.
      </p>
      {canWrite && (
        <button type="button" className="button" disabled={busy} onClick={unpin}>
          Unpin
        </button>
      )}
      <ErrorMessage error={error} />
    </div>
  );
}
