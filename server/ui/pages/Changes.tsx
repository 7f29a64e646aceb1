/**
 * Changes and rollouts at /ui/changes: the deployment flow in page order —
 * review pending edits file by file, commit them with a message (or discard
 * them), publish the head commit (the fleet after reviewing its plan, all at
 * once or staged, or one collector; publish/), watch the rollout converge or
 * step through its batches, and read the commit history. Live worktree events
 * refresh the pending list; rollout and config_target events refresh the
 * progress (at most once a second, as a fleet publish sends one per
 * collector). Viewers see everything without the write buttons.
 */
import { useMemo, useState, type FormEvent } from "react";
import { api } from "../client.ts";
import { useAction } from "../action.ts";
import { useLoad } from "../load.ts";
import { shortCommit } from "../format.ts";
import { ChangedFiles, parseDiff } from "../components/ChangedFiles.tsx";
import { ErrorMessage } from "../components/ErrorMessage.tsx";
import { useLiveEvents } from "../events.ts";
import { CommitHistory } from "./CommitHistory.tsx";
import { Publish } from "../publish/Publish.tsx";
import { RolloutProgress } from "../publish/RolloutProgress.tsx";
import { Link } from "../router.tsx";
import { useSession } from "../session.tsx";
import "./Changes.css";
import { useThrottledCounter } from "../refresh.ts";

export function ChangesPage() {
  const { state } = useSession();
  const canWrite = state.status === "signedIn" && state.user.role !== "viewer";
  const [worktree, setWorktree] = useState(0);
  const [commits, setCommits] = useState(0);
  const [rollout, bumpRollout] = useThrottledCounter(1000);

  useLiveEvents(["worktree", "rollout", "config_target"], (event) => {
    if (event.type === "worktree" || event.type === "reconnected") setWorktree((n) => n + 1);
    if (event.type !== "worktree") bumpRollout();
  });

  return (
    <section className="changes-page" aria-labelledby="changes-title">
      <div className="page-head">
        <h1 id="changes-title">Changes</h1>
      </div>
      <PendingChanges canWrite={canWrite} reload={worktree} onCommitted={() => setCommits((n) => n + 1)} />
      {canWrite && <Publish onPublished={bumpRollout} onPlanned={() => setWorktree((n) => n + 1)} />}
      <RolloutProgress reload={rollout} canWrite={canWrite} onChanged={bumpRollout} />
      <CommitHistory reload={commits + worktree} />
    </section>
  );
}

function PendingChanges({ canWrite, reload, onCommitted }: { canWrite: boolean; reload: number; onCommitted: () => void }) {
  const [result, setResult] = useState("");
  const [changed, setChanged] = useState(0);
  const loaded = useLoad(() => api.get("/changes"), `${reload}|${changed}`);
  const items = loaded.data?.items ?? null;
  const patches = useMemo(() => (loaded.data ? parseDiff(loaded.data.diff) : []), [loaded.data]);
  const committing = useAction();
  const discarding = useAction();
  const busy = committing.busy || discarding.busy;
  const error = discarding.error ?? loaded.error;
  const commitError = committing.error;

  function commit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = event.currentTarget;
    const message = String(new FormData(form).get("message") ?? "");
    setResult("");
    committing.run(
      () => api.post("/commit", { body: { message } }),
      (made) => {
        form.reset();
        setResult(`Committed ${shortCommit(made.commit)} with ${made.files.length} file${made.files.length === 1 ? "" : "s"}.`);
        setChanged((n) => n + 1);
        onCommitted();
      },
    );
  }

  function discard() {
    if (!window.confirm("Discard every pending change? The working tree returns to the last commit; this cannot be undone.")) return;
    setResult("");
    discarding.run(
      () => api.post("/changes/discard"),
      (answer) => {
        setResult(`Discarded ${answer.items.length} change${answer.items.length === 1 ? "" : "s"}.`);
        setChanged((n) => n + 1);
      },
    );
  }

  const count = items?.length ?? 0;
  return (
    <section className="detail-block" aria-labelledby="pending-title">
      <h2 id="pending-title">Pending changes</h2>
      <ErrorMessage error={error} />
      <p className="muted" aria-live="polite">
        {items === null ? (error ? "" : "Loading…") : count === 0 ? "No pending changes." : `${count} changed file${count === 1 ? "" : "s"}.`} {result}
      </p>
      {items !== null && count === 0 && !error && (
        <p className="hint">
          Edits on <Link href="/ui/pipelines">Pipelines</Link>, <Link href="/ui/sources">Sources</Link>, <Link href="/ui/destinations">Destinations</Link> and{" "}
          <Link href="/ui/routes">Routes</Link> collect here until you commit them.
        </p>
      )}
      {items !== null && count > 0 && <ChangedFiles items={items} patches={patches} label="Changed files" />}
      {canWrite && count > 0 && (
        <form className="commit-form" aria-label="Commit pending changes" onSubmit={commit}>
          <label htmlFor="commit-message">Commit message</label>
          <textarea
            id="commit-message"
            name="message"
            rows={3}
            required
            maxLength={10_000}
            aria-invalid={commitError !== null || undefined}
            aria-describedby={commitError ? "commit-error" : undefined}
          />
          <ErrorMessage error={commitError} id="commit-error" />
          <div className="commit-actions">
            <button type="submit" className="button primary" disabled={busy}>
              Commit
            </button>
            <button type="button" className="button" disabled={busy} onClick={discard}>
              Discard all changes
            </button>
          </div>
        </form>
      )}
    </section>
  );
}
