/**
 * Actions on the collectors selected in the list: set their environment, add
 * a tag, or delete them (after a confirmation). The API has no bulk write, so
 * each collector is one PATCH or DELETE, a few at a time; the bar counts them
 * as they finish and lists each failure with the API's message. Collectors
 * that succeeded leave the selection, those that failed stay in it for a
 * retry; the list itself updates from live events. With nothing selected
 * the bar shows only the last run's outcome, until dismissed.
 */
import { useState, type FormEvent } from "react";
import { api, ApiError } from "../api.ts";
import { ErrorMessage } from "../components/ErrorMessage.tsx";
import { parseTags } from "./tags.ts";
import type { Collector } from "../../../shared/collectors.ts";

/** Calls in flight at once: quick for a few hundred, without flooding the server. */
const CONCURRENCY = 4;

interface Run {
  verb: string;
  done: number;
  total: number;
  failures: { collector: Collector; message: string }[];
}

async function eachCollector(collectors: Collector[], call: (c: Collector) => Promise<unknown>, onSettled: (c: Collector, error: ApiError | null) => void) {
  let next = 0;
  async function worker() {
    while (next < collectors.length) {
      const collector = collectors[next++]!;
      await call(collector).then(
        () => onSettled(collector, null),
        (caught: ApiError) => onSettled(collector, caught),
      );
    }
  }
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, collectors.length) }, worker));
}

export function BulkActions({ selected, onSettled }: { selected: Collector[]; onSettled: (succeeded: string[]) => void }) {
  const [run, setRun] = useState<Run | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const busy = run !== null && run.done < run.total;

  function start(verb: string, call: (c: Collector) => Promise<unknown>) {
    const targets = selected;
    const succeeded: string[] = [];
    setError(null);
    setRun({ verb, done: 0, total: targets.length, failures: [] });
    void eachCollector(targets, call, (collector, caught) => {
      if (caught === null) succeeded.push(collector.id);
      setRun((r) => r && { ...r, done: r.done + 1, failures: caught ? [...r.failures, { collector, message: caught.message }] : r.failures });
    }).then(() => onSettled(succeeded));
  }

  const patch = (c: Collector, body: Partial<Collector>) => api.patch(`/collectors/${encodeURIComponent(c.id)}`, body);

  function setEnvironment(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const environment = String(new FormData(event.currentTarget).get("environment") ?? "").trim();
    start(environment === "" ? "Clearing environment" : `Setting environment ${environment}`, (c) =>
      patch(c, { environment: environment === "" ? null : environment }),
    );
  }

  function addTag(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    let tag: Record<string, string>;
    try {
      tag = parseTags(String(new FormData(event.currentTarget).get("tag") ?? ""));
      if (Object.keys(tag).length === 0) throw new ApiError(0, "validation_failed", "Give a tag as key=value.", [{ path: "tags", message: "is empty" }]);
    } catch (caught) {
      setError(caught as ApiError);
      return;
    }
    const [[key, value]] = Object.entries(tag) as [[string, string]];
    // PATCH replaces tags whole: each collector keeps its own and gains this one.
    start(`Adding tag ${key}=${value}`, (c) => patch(c, { tags: { ...c.tags, ...tag } }));
  }

  function remove() {
    const n = selected.length;
    if (!window.confirm(`Delete ${n} collector${n === 1 ? "" : "s"}? Their records and tokens are removed; running collectors can no longer connect.`)) return;
    start("Deleting", (c) => api.delete(`/collectors/${encodeURIComponent(c.id)}`));
  }

  const count = selected.length;
  if (count === 0 && run === null) return null;
  return (
    <section className="bulk-bar" aria-labelledby="bulk-title">
      <h2 id="bulk-title" className="bulk-count">
        {count > 0 ? `${count} selected` : "Last bulk action"}
      </h2>
      {count > 0 ? (
        <>
          <form className="bulk-form" aria-label="Set environment of selected" onSubmit={setEnvironment}>
            <label htmlFor="bulk-environment">Environment</label>
            <input id="bulk-environment" name="environment" maxLength={200} placeholder="prod (empty clears)" />
            <button type="submit" className="button" disabled={busy}>
              Set environment
            </button>
          </form>
          <form className="bulk-form" aria-label="Add a tag to selected" onSubmit={addTag}>
            <label htmlFor="bulk-tag">Tag</label>
            <input id="bulk-tag" name="tag" placeholder="team=payments" required />
            <button type="submit" className="button" disabled={busy}>
              Add tag
            </button>
          </form>
          <button type="button" className="button danger" disabled={busy} onClick={remove}>
            Delete selected
          </button>
        </>
      ) : (
        <button type="button" className="button" disabled={busy} onClick={() => setRun(null)}>
          Dismiss
        </button>
      )}
      <ErrorMessage error={error} />
      {run && (
        <div className="bulk-progress" role="status">
          <progress max={run.total} value={run.done} aria-label={`${run.verb}: progress`} />
          <span>
            {run.verb}: {run.done} of {run.total} done
            {run.failures.length > 0 ? `, ${run.failures.length} failed` : ""}.
          </span>
        </div>
      )}
      {run && run.failures.length > 0 && (
        <ul className="bulk-failures" aria-label="Failures">
          {run.failures.map(({ collector, message }) => (
            <li key={collector.id}>
              <strong>{collector.name}</strong>: {message}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
