/**
 * Pause, resume and abort for the latest staged rollout, for users who may
 * publish. Abort first asks, because it cannot be undone, and offers to roll
 * the collectors that failed back to the config they ran before.
 */
import { useState, type FormEvent } from "react";
import type { RolloutStatus } from "../../../shared/rollouts.ts";
import { api } from "../client.ts";
import { useAction } from "../action.ts";
import { ErrorMessage } from "../components/ErrorMessage.tsx";
import { plural } from "./plan.ts";

interface Props {
  status: RolloutStatus;
  /** After an action, with what to tell (the page keeps it: an abort's rollbacks become the latest rollouts). */
  onDone: (notice: string) => void;
}

export function RolloutControls({ status, onDone }: Props) {
  const [asking, setAsking] = useState(false);
  const [rollbackFailed, setRollbackFailed] = useState(false);
  const { busy, error, run } = useAction();
  const id = status.rolloutId;
  if (!id || !status.batches) return null;
  // All batches out and still running means it is only settling: nothing left to pause or abort.
  const queued = status.batches.some((b) => !b.released);
  const paused = status.state === "paused";
  const canPause = status.state === "running" && queued;
  const canAbort = paused || canPause;
  if (!canAbort) return null;

  function act(action: "pause" | "resume" | "abort", body?: unknown) {
    run(
      // Only an abort answers rolledBack.
      () => api.post(`/rollouts/{id}/${action}`, { params: { id: id! }, body }),
      (answer) => {
        setAsking(false);
        onDone(action === "abort" ? `Aborted; ${plural("rolledBack" in answer ? answer.rolledBack.length : 0, "collector")} rolled back.` : "");
      },
    );
  }

  function abort(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    act("abort", { rollbackFailed });
  }

  const failed = status.counts.failed;
  return (
    <div className="rollout-controls">
      {!asking && (
        <div className="control-buttons">
          {canPause && (
            <button type="button" className="button" disabled={busy} onClick={() => act("pause")}>
              Pause
            </button>
          )}
          {paused && (
            <button type="button" className="button primary" disabled={busy} aria-describedby="resume-hint" onClick={() => act("resume")}>
              Resume
            </button>
          )}
          <button type="button" className="button" disabled={busy} onClick={() => setAsking(true)}>
            Abort
          </button>
          {paused && (
            <span id="resume-hint" className="hint">
              Resuming accepts the failures so far and goes on with the rollout.
            </span>
          )}
        </div>
      )}
      {asking && (
        <form className="abort-form" aria-label="Abort the rollout" onSubmit={abort}>
          <p>Abort this rollout? Batches not released yet keep the config they run; this cannot be resumed.</p>
          {failed > 0 ? (
            <label>
              <input type="checkbox" checked={rollbackFailed} onChange={(e) => setRollbackFailed(e.currentTarget.checked)} /> Also roll the{" "}
              {plural(failed, "collector")} that failed back to their previous config
            </label>
          ) : (
            <p className="hint">No collector has failed, so there is nothing to roll back.</p>
          )}
          <div className="control-buttons">
            <button type="submit" className="button danger" disabled={busy}>
              Abort rollout
            </button>
            <button type="button" className="button ghost" disabled={busy} onClick={() => setAsking(false)}>
              Keep it
            </button>
          </div>
        </form>
      )}
      <ErrorMessage error={error} />
    </div>
  );
}
