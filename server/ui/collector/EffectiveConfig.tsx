/**
 * What the collector should run (the published target, with its delivery
 * state) beside what it last said it runs (OpAMP effective config). Either
 * may be unknown: nothing published yet, or a collector that never reported.
 * Above the target, what stands about it: pinned by a rollback, rolled back
 * from by the collector itself, drifted. Their actions' outcomes are said
 * here, since the note that offered one goes once it is done.
 */
import { useState } from "react";
import { api } from "../client.ts";
import { useLoad } from "../load.ts";
import { ErrorMessage } from "../components/ErrorMessage.tsx";
import { LastSeen } from "../components/LastSeen.tsx";
import { shortCommit } from "../format.ts";
import { CollectorRollbackNote } from "./CollectorRollback.tsx";
import { DriftNote } from "./Drift.tsx";
import { PinnedNote } from "./Pinned.tsx";

export function EffectiveConfigSection({
  collectorId,
  reload,
  canWrite,
  onChanged,
}: {
  collectorId: string;
  reload: number;
  canWrite: boolean;
  /** A note's action changed the target: the page refreshes its config parts. */
  onChanged: () => void;
}) {
  const { data: config, error } = useLoad(() => api.get("/collectors/{id}/effective-config", { params: { id: collectorId } }), `${collectorId}|${reload}`);
  const [result, setResult] = useState("");
  const done = (message: string) => {
    setResult(message);
    onChanged();
  };

  const target = config?.target ?? null;
  const effective = config?.effective ?? null;
  return (
    <section className="detail-block" aria-labelledby="effective-title">
      <h2 id="effective-title">Configuration</h2>
      <ErrorMessage error={error} />
      <p role="status" className="muted">
        {result}
      </p>
      {!config && !error && <p className="muted">Loading…</p>}
      {config && (
        <>
          <h3 id="target-title">Target config</h3>
          {target === null ? (
            <p className="muted">Nothing has been published to this collector yet.</p>
          ) : (
            <>
              {target.pinned && <PinnedNote collectorId={collectorId} pinned={target.pinned} canWrite={canWrite} onDone={done} />}
              {target.collectorRollback && (
                <CollectorRollbackNote collectorId={collectorId} rollback={target.collectorRollback} canWrite={canWrite} onDone={done} />
              )}
              <DriftNote target={target} />
              <p>
                Commit <code>{shortCommit(target.commit)}</code>, delivery state <strong className="config-state">{target.state}</strong>
                {target.error && (
                  <>
                    : <span className="config-error">{target.error}</span>
                  </>
                )}
              </p>
              <pre className="code-block" role="region" aria-labelledby="target-title" tabIndex={0}>
                <code>{target.body}</code>
              </pre>
            </>
          )}
          <h3 id="reported-title">Reported by the collector</h3>
          {effective === null ? (
            <p className="muted">The collector has not reported the config it runs.</p>
          ) : (
            <>
              {effective.refused && (
                <p className="setup-warning" role="note">
                  Its last report (<LastSeen at={effective.refused.at} />) was not kept: {effective.refused.reason}
                </p>
              )}
              <p className="muted">
                Reported <LastSeen at={effective.reportedAt} />.
              </p>
              {effective.files.map((file, i) => (
                <div key={file.name || i} className="config-file">
                  <p id={`reported-file-${i}`} className="config-file-name">
                    <code>{file.name || "(unnamed)"}</code> <span className="muted">{file.contentType}</span>
                  </p>
                  <pre className="code-block" role="region" aria-labelledby={`reported-title reported-file-${i}`} tabIndex={0}>
                    <code>{file.body}</code>
                  </pre>
                </div>
              ))}
            </>
          )}
        </>
      )}
    </section>
  );
}
