/**
 * Progress of the latest fleet rollout (GET /publish/status?scope=fleet: the
 * staged one in progress, else the latest publish to the fleet; one to a
 * single collector or a rollback is on Rollouts), refetched whenever
 * `reload` changes (the page bumps it on live rollout and config_target
 * events): its state in words, counts by config state, and for a staged
 * rollout which batch is out, each batch's bar, the ETA, why it paused, and
 * the controls for users who can write.
 */
import { useState } from "react";
import type { RolloutStatus } from "../../../shared/rollouts.ts";
import { api } from "../client.ts";
import { useLoad } from "../load.ts";
import { shortCommit } from "../format.ts";
import { ErrorMessage } from "../components/ErrorMessage.tsx";
import { Link } from "../router.tsx";
import { LastSeen } from "../components/LastSeen.tsx";
import { BatchList } from "./BatchList.tsx";
import { Failures } from "./Failures.tsx";
import { Skipped } from "./Skipped.tsx";
import { RolloutControls } from "./RolloutControls.tsx";
import { batchPosition, plural } from "./plan.ts";
import "./publish.css";

const STATE_WORDS: Record<RolloutStatus["state"], string> = {
  idle: "No publish yet",
  running: "Running",
  paused: "Paused",
  aborted: "Aborted",
  completed: "Completed",
  completed_with_errors: "Completed with errors",
};

const STATES = ["current", "applying", "outdated", "failed", "offline", "reporting_only"] as const;

interface Props {
  reload: number;
  canWrite: boolean;
  /** Asks the page to refetch (after a pause, resume or abort). */
  onChanged: () => void;
}

export function RolloutProgress({ reload, canWrite, onChanged }: Props) {
  const { data: status, error } = useLoad(() => api.get("/publish/status", { query: { scope: "fleet" } }), String(reload));
  const [notice, setNotice] = useState("");

  const position = status && batchPosition(status);
  // Queued: a staged batch not released, or collectors a publish's writes have not reached yet.
  const states = status?.batches || (status?.counts.queued ?? 0) > 0 ? [...STATES, "queued" as const] : STATES;
  return (
    <section className="detail-block" aria-labelledby="rollout-title">
      <h2 id="rollout-title">Rollout progress</h2>
      <p className="hint">
        The latest rollout to the fleet. Every rollout, one collector's and rollbacks too, is on <Link href="/ui/rollouts">Rollouts</Link>.
      </p>
      <ErrorMessage error={error} />
      {!status && !error && <p className="muted">Loading…</p>}
      {status && (
        <>
          <p aria-live="polite">
            <strong>{STATE_WORDS[status.state]}</strong>
            {status.commit && (
              <>
                {" "}
                · commit <code>{shortCommit(status.commit)}</code> · {plural(status.total, "collector")}
              </>
            )}
            {position && <> · {position}</>}
          </p>
          {status.state === "paused" && status.pausedReason && <p className="note pause-reason">Paused: {status.pausedReason}.</p>}
          {status.interrupted && (
            <p className="note">
              Interrupted: the server stopped while writing this publish; {status.interrupted.written} of {plural(status.interrupted.planned, "collector")} got
              it, the others kept what they ran. Publish again to deliver the rest.
            </p>
          )}
          {status.eta && (
            <p className="muted">
              Last batch expected <LastSeen at={status.eta} />
            </p>
          )}
          {status.state !== "idle" && (
            <dl className="rollout-counts">
              {states.map((s) => (
                <div key={s} className={`count count-${s}`}>
                  <dt>{s.replace("_", " ")}</dt>
                  <dd>{status.counts[s]}</dd>
                </div>
              ))}
            </dl>
          )}
          {canWrite && (
            <RolloutControls
              key={status.rolloutId ?? "none"}
              status={status}
              onDone={(text) => {
                setNotice(text);
                onChanged();
              }}
            />
          )}
          <p role="status" className="muted">
            {notice}
          </p>
          {status.batches && <BatchList batches={status.batches} />}
          <Failures collectors={status.collectors} />
          <Skipped skipped={status.skipped} />
        </>
      )}
    </section>
  );
}
