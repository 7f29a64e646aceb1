/**
 * Every config pushed to the collector, newest first, the latest being its
 * target, each saying why it was pushed when not by a publish (a rollback, or
 * "attributes changed": rendered again at the same commit because its
 * attributes changed), and, while it stands, why its config could not be
 * rendered after its attributes changed, and what became of each: current,
 * applying, failed (with the collector's message), superseded, rolled back,
 * rolled back by the collector. Any version can be compared with the one
 * before it (the bodies are fetched on demand and kept: a version never
 * changes). Rollback is offered on the version the API restores, after a
 * confirmation that says it pins the collector, and its outcome is announced.
 */
import { useRef, useState } from "react";
import type { ApiError } from "../api.ts";
import { api } from "../client.ts";
import { Diff, textPatch, type StructuredPatch } from "../components/Diff.tsx";
import { ErrorMessage } from "../components/ErrorMessage.tsx";
import { LastSeen } from "../components/LastSeen.tsx";
import { ListTable } from "../components/ListTable.tsx";
import { shortCommit } from "../format.ts";
import { useAction } from "../action.ts";
import { useLoad } from "../load.ts";
import { historyStateWords } from "./historyState.ts";
import type { ConfigVersion, HistoryEntry } from "./types.ts";

/**
 * The version POST /rollback returns to (mirrors server/rollout/rollout.ts
 * rollback): the newest other config the collector did not fail, else the
 * newest other one. The server picks the newest it applied, which the view's
 * states cannot always tell from one superseded before it was applied; the
 * announced outcome names the version it really restored.
 */
function rollbackTarget(history: HistoryEntry[]): HistoryEntry | null {
  const current = history[history.length - 1];
  if (!current) return null;
  const earlier = [...history].reverse().filter((e) => e.hash !== current.hash);
  return earlier.find((e) => e.state !== "failed" && e.state !== "rolled_back_by_collector") ?? earlier[0] ?? null;
}

interface Comparison {
  seq: number;
  patch: StructuredPatch | null;
  error: ApiError | null;
}

export function ConfigHistorySection({
  collectorId,
  reload,
  canWrite,
  onRolledBack,
}: {
  collectorId: string;
  reload: number;
  canWrite: boolean;
  onRolledBack: () => void;
}) {
  const loaded = useLoad(() => api.get("/collectors/{id}/config-history", { params: { id: collectorId } }), `${collectorId}|${reload}`);
  const history = loaded.data?.items ?? null;
  const renderFailure = loaded.data?.renderFailure ?? null;
  const action = useAction();
  const error = action.error ?? loaded.error;
  const busy = action.busy;
  const [comparison, setComparison] = useState<Comparison | null>(null);
  const [result, setResult] = useState("");
  const bodies = useRef(new Map<number, Promise<ConfigVersion>>());

  function version(seq: number): Promise<ConfigVersion> {
    let found = bodies.current.get(seq);
    if (!found) {
      found = api.get("/collectors/{id}/config-history/{seq}", { params: { id: collectorId, seq: String(seq) } });
      found.catch(() => bodies.current.delete(seq));
      bodies.current.set(seq, found);
    }
    return found;
  }

  function compare(entry: HistoryEntry) {
    if (!history) return;
    if (comparison?.seq === entry.seq) return setComparison(null);
    const previous = previousOf(entry.seq);
    setComparison({ seq: entry.seq, patch: null, error: null });
    Promise.all([previous ? version(previous.seq) : null, version(entry.seq)]).then(
      ([before, after]) =>
        setComparison((c) =>
          c?.seq === entry.seq
            ? { ...c, patch: textPatch(before?.body ?? "", after.body, before ? `version ${before.seq}` : "nothing", `version ${after.seq}`) }
            : c,
        ),
      (caught: ApiError) => setComparison((c) => (c?.seq === entry.seq ? { ...c, error: caught } : c)),
    );
  }

  function rollback(to: HistoryEntry) {
    const question =
      `Roll this collector back to version ${to.seq} (commit ${shortCommit(to.commit)})? It is pushed as a new version, ` +
      "and the collector is pinned to it: fleet publishes skip it until it is unpinned.";
    if (!window.confirm(question)) return;
    setResult("");
    action.run(
      () => api.post("/collectors/{id}/rollback", { params: { id: collectorId } }),
      (entry) => {
        setResult(
          `Rolled back to version ${entry.rollbackOf ?? to.seq}: version ${entry.seq} is now the target (${entry.state}). The collector is pinned to it.`,
        );
        loaded.setData((before) => ({
          renderFailure: before?.renderFailure ?? null,
          items: before ? [...before.items.filter((e) => e.seq !== entry.seq), entry] : [entry],
        }));
        onRolledBack();
      },
    );
  }

  const candidate = history ? rollbackTarget(history) : null;
  const newestFirst = history ? [...history].reverse() : [];
  const previousOf = (seq: number) => newestFirst.find((e) => e.seq < seq);
  return (
    <section className="detail-block" aria-labelledby="history-title">
      <h2 id="history-title">Config history</h2>
      <ErrorMessage error={error} />
      <p role="status" className="muted">
        {result}
      </p>
      {renderFailure && (
        <p className="setup-warning" role="note">
          <strong>Skipped: the config cannot be rendered</strong> at commit <code>{shortCommit(renderFailure.commit)}</code>:{" "}
          {renderFailure.error.replace(/\.$/, "")}. The collector keeps the config it runs until a render of it succeeds (its attributes change, or a publish).
        </p>
      )}
      {history === null ? (
        !error && <p className="muted">Loading…</p>
      ) : history.length === 0 ? (
        <p className="muted">Nothing has been pushed to this collector yet.</p>
      ) : (
        <ListTable
          caption={{ id: "history-caption", text: "Config history" }}
          className="history-list"
          columns={["Version", "Commit", "Pushed", "By", "State"]}
          actions
        >
          {newestFirst.map((entry, i) => (
            <tr key={entry.seq} aria-current={i === 0 ? "true" : undefined}>
              <th scope="row">
                <span className="name">Version {entry.seq}</span>
                {i === 0 && <span className="tag target-tag">target</span>}
                {entry.rollbackOf !== undefined && <span className="id muted">rollback to version {entry.rollbackOf}</span>}
                {entry.cause === "attributes" && <span className="id muted">attributes changed</span>}
              </th>
              <td>
                <code>{shortCommit(entry.commit)}</code>
              </td>
              <td>
                <LastSeen at={entry.time} />
              </td>
              <td>{entry.actor}</td>
              <td className="history-state">
                {historyStateWords(entry, newestFirst[i - 1])}
                {entry.error && <span className="config-error history-error">{entry.error}</span>}
              </td>
              <td className="row-actions">
                <button type="button" className="button" aria-pressed={comparison?.seq === entry.seq} onClick={() => compare(entry)}>
                  Compare version {entry.seq}
                </button>
                {canWrite && candidate?.seq === entry.seq && (
                  <button type="button" className="button" disabled={busy} onClick={() => rollback(entry)}>
                    Roll back to version {entry.seq}
                  </button>
                )}
              </td>
            </tr>
          ))}
        </ListTable>
      )}
      {comparison && (
        <div className="history-diff">
          <h3>
            Version {comparison.seq} against {previousOf(comparison.seq) ? `version ${previousOf(comparison.seq)!.seq}` : "nothing"}
          </h3>
          <ErrorMessage error={comparison.error} />
          {comparison.patch ? (
            <Diff patch={comparison.patch} label={`Changes in version ${comparison.seq}`} />
          ) : (
            !comparison.error && <p className="muted">Loading…</p>
          )}
        </div>
      )}
    </section>
  );
}
