/**
 * Actions on the collectors selected in the list: set their environment, set
 * or remove tags, or delete them (after a confirmation). Tags go through
 * POST /collectors/tags, which edits every collector its matchers select
 * (audited as one edit per call): an explicit selection becomes matchers on
 * `collector.id` (../matchers.ts selectionMatchers, about a dozen ids a call:
 * the API caps a matcher's RE2 program), and "all matching" sends the list's
 * own matchers, so collectors not loaded yet are tagged too. Environment and
 * delete have no bulk API: each collector is one PATCH or DELETE, a few at a
 * time. The bar counts collectors as they finish and lists each failure with
 * the API's message. Collectors that
 * succeeded leave the selection, those that failed stay in it for a retry;
 * the list itself updates from live events. With nothing selected the bar
 * shows only the last run's outcome, until dismissed. An edit that would
 * change what collectors run is a deployment: its plan is asked for first
 * (POST /collectors/tags/plan, or each collector's edit-plan for the
 * environment) and shown, and the edit runs only once confirmed, staged if
 * the operator asks and it is one call.
 */
import { useState, type FormEvent } from "react";
import type { PublishPlan, Strategy } from "../../../shared/rollouts.ts";
import { ApiError } from "../api.ts";
import { api } from "../client.ts";
import { useAction } from "../action.ts";
import { mergePlans } from "../publish/plan.ts";
import { DeployConfirm } from "./DeployConfirm.tsx";
import { ErrorMessage } from "../components/ErrorMessage.tsx";
import { selectionMatchers } from "../matchers.ts";
import { parseTags } from "./tags.ts";
import type { Collector } from "../../../shared/collectors.ts";

/** Calls in flight at once: quick for a few hundred, without flooding the server. */
const CONCURRENCY = 4;

interface Run {
  verb: string;
  done: number;
  total: number;
  failures: { collector: Collector; message: string }[];
  /** A tag edit: of the collectors done, how many had their tags changed (the others already had them). */
  changed?: number;
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

/** What the bar acts on: the rows ticked, or every collector the list's matchers select (loaded or not). */
export type BulkTarget = { kind: "rows"; collectors: Collector[] } | { kind: "matching"; matchers: string[]; count: number };

interface TagEdit {
  set?: Record<string, string>;
  remove?: string[];
}

/** An edit waiting for its plan to be confirmed. */
interface PendingDeploy {
  verb: string;
  plan: PublishPlan;
  stageable: boolean;
  apply: (strategy: Strategy | undefined) => void;
}

/** A tag edit's words for the progress line: "fleet=eu", "-fleet". */
function describeEdit(edit: TagEdit): string {
  return [...Object.entries(edit.set ?? {}).map(([k, v]) => `${k}=${v}`), ...(edit.remove ?? []).map((k) => `-${k}`)].join(", ");
}

/** Keys to remove, comma-separated; the same refusal as parseTags gives when there is none. */
function parseKeys(text: string): string[] {
  const keys = text
    .split(",")
    .map((k) => k.trim())
    .filter((k) => k !== "");
  if (keys.length === 0) throw new ApiError(0, "validation_failed", "Give the tags to remove by key.", [{ path: "remove", message: "is empty" }]);
  return keys;
}

export function BulkActions({ target, onSettled }: { target: BulkTarget; onSettled: (succeeded: string[]) => void }) {
  const [run, setRun] = useState<Run | null>(null);
  const { busy: planning, error, setError, run: ask } = useAction();
  const [pending, setPending] = useState<PendingDeploy | null>(null);
  const busy = planning || (run !== null && run.done < run.total);

  /**
   * Asks for the plans, then runs `apply` at once when no config changes, or
   * shows the merged plan for confirmation.
   */
  function planFirst(verb: string, plans: () => Promise<(PublishPlan | null)[]>, stageable: boolean, apply: (strategy: Strategy | undefined) => void) {
    ask(
      () => plans().then((found) => mergePlans(found.filter((p) => p !== null))),
      (plan) => {
        if (plan && plan.changes.length > 0) setPending({ verb, plan, stageable, apply });
        else apply(undefined);
      },
    );
  }
  const selected = target.kind === "rows" ? target.collectors : [];

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

  const patch = (c: Collector, body: Partial<Collector>) => api.patch("/collectors/{id}", { params: { id: c.id }, body });

  function setEnvironment(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const text = String(new FormData(event.currentTarget).get("environment") ?? "").trim();
    const environment = text === "" ? null : text;
    const verb = environment === null ? "Clearing environment" : `Setting environment ${environment}`;
    const targets = selected;
    const plans = async () => {
      const out: (PublishPlan | null)[] = [];
      let failure: ApiError | null = null;
      await eachCollector(
        targets,
        async (c) => out.push((await api.post("/collectors/{id}/edit-plan", { params: { id: c.id }, body: { environment } })).plan),
        (_, caught) => (failure ??= caught),
      );
      if (failure) throw failure;
      return out;
    };
    // One PATCH per collector: each that changes a config is its own rollout, so none is staged.
    planFirst(verb, plans, false, () => start(verb, (c) => patch(c, { environment })));
  }

  /** The matchers of each of the tag edit's calls: one for "all matching", one per selection chunk otherwise. */
  function tagCalls(): string[][] {
    if (target.kind === "matching") return [target.matchers];
    return selectionMatchers(selected.map((c) => c.id)).map((chunk) => [chunk.match]);
  }

  /** Plans the tag edit, then runs it once confirmed (or at once when it changes no config). */
  function planTags(verb: string, edit: TagEdit) {
    const calls = tagCalls();
    const plans = () => Promise.all(calls.map(async (match) => (await api.post("/collectors/tags/plan", { body: { match, ...edit } })).plan));
    planFirst(verb, plans, calls.length === 1, (strategy) => void editTags(verb, { ...edit, ...(strategy ? { strategy } : {}) }));
  }

  /** The edit on every targeted collector: one call for "all matching", one per selection chunk otherwise. */
  async function editTags(verb: string, edit: TagEdit & { strategy?: Strategy }) {
    setError(null);
    setPending(null);
    if (target.kind === "matching") {
      setRun({ verb, done: 0, total: target.count, failures: [] });
      try {
        const result = await api.post("/collectors/tags", { body: { match: target.matchers, ...edit } });
        setRun({ verb, done: result.matched, total: result.matched, failures: [], changed: result.changed });
      } catch (caught) {
        setRun(null);
        setError(caught as ApiError);
      }
      onSettled([]);
      return;
    }
    const byId = new Map(selected.map((c) => [c.id, c]));
    const succeeded: string[] = [];
    let changed = 0;
    setRun({ verb, done: 0, total: selected.length, failures: [] });
    for (const chunk of selectionMatchers(selected.map((c) => c.id))) {
      try {
        changed += (await api.post("/collectors/tags", { body: { match: [chunk.match], ...edit } })).changed;
        succeeded.push(...chunk.ids);
        setRun((r) => r && { ...r, done: r.done + chunk.ids.length, changed });
      } catch (caught) {
        const failed = chunk.ids.map((id) => ({ collector: byId.get(id)!, message: (caught as ApiError).message }));
        setRun((r) => r && { ...r, done: r.done + chunk.ids.length, failures: [...r.failures, ...failed] });
      }
    }
    onSettled(succeeded);
  }

  /** Reads one of the tag forms, or shows why it cannot be read. */
  function readForm<T>(event: FormEvent<HTMLFormElement>, field: string, parse: (text: string) => T): T | null {
    event.preventDefault();
    try {
      return parse(String(new FormData(event.currentTarget).get(field) ?? ""));
    } catch (caught) {
      setError(caught as ApiError);
      return null;
    }
  }

  function setTags(event: FormEvent<HTMLFormElement>) {
    const set = readForm(event, "set", (text) => {
      const tags = parseTags(text);
      if (Object.keys(tags).length === 0) throw new ApiError(0, "validation_failed", "Give tags as key=value.", [{ path: "set", message: "is empty" }]);
      return tags;
    });
    if (set) planTags(`Setting tags ${describeEdit({ set })}`, { set });
  }

  function removeTags(event: FormEvent<HTMLFormElement>) {
    const remove = readForm(event, "remove", parseKeys);
    if (remove) planTags(`Removing tags ${remove.join(", ")}`, { remove });
  }

  function remove() {
    const n = selected.length;
    if (!window.confirm(`Delete ${n} collector${n === 1 ? "" : "s"}? Their records and tokens are removed; running collectors can no longer connect.`)) return;
    start("Deleting", (c) => api.delete("/collectors/{id}", { params: { id: c.id } }));
  }

  const count = target.kind === "rows" ? selected.length : target.count;
  if (count === 0 && run === null) return null;
  const title = target.kind === "matching" ? `All ${count} matching selected` : count > 0 ? `${count} selected` : "Last bulk action";
  return (
    <section className="bulk-bar" aria-labelledby="bulk-title">
      <h2 id="bulk-title" className="bulk-count">
        {title}
      </h2>
      {count > 0 ? (
        <>
          {target.kind === "rows" && (
            <form className="bulk-form" aria-label="Set environment of selected" onSubmit={setEnvironment}>
              <label htmlFor="bulk-environment">Environment</label>
              <input id="bulk-environment" name="environment" maxLength={200} placeholder="prod (empty clears)" />
              <button type="submit" className="button" disabled={busy}>
                Set environment
              </button>
            </form>
          )}
          <form className="bulk-form" aria-label="Set tags on selected" onSubmit={setTags}>
            <label htmlFor="bulk-set">Tags to set</label>
            <input id="bulk-set" name="set" placeholder="team=payments" required />
            <button type="submit" className="button" disabled={busy}>
              Set tags
            </button>
          </form>
          <form className="bulk-form" aria-label="Remove tags from selected" onSubmit={removeTags}>
            <label htmlFor="bulk-remove">Tags to remove</label>
            <input id="bulk-remove" name="remove" placeholder="team, tier" required />
            <button type="submit" className="button" disabled={busy}>
              Remove tags
            </button>
          </form>
          {target.kind === "rows" && (
            <button type="button" className="button danger" disabled={busy} onClick={remove}>
              Delete selected
            </button>
          )}
        </>
      ) : (
        <button type="button" className="button" disabled={busy} onClick={() => setRun(null)}>
          Dismiss
        </button>
      )}
      {pending && (
        <DeployConfirm
          label={`${pending.verb}: plan`}
          plan={pending.plan}
          stageable={pending.stageable}
          busy={busy}
          onApply={(strategy) => {
            setPending(null);
            pending.apply(strategy);
          }}
          onCancel={() => setPending(null)}
        />
      )}
      <ErrorMessage error={error} />
      {run && (
        <div className="bulk-progress" role="status">
          <progress max={run.total} value={run.done} aria-label={`${run.verb}: progress`} />
          <span>
            {run.verb}: {run.done} of {run.total} done
            {run.changed !== undefined ? ` (${run.changed} changed)` : ""}
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
