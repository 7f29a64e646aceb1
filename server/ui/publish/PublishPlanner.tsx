/**
 * Publish as plan → confirm: "Review and publish" asks the server what a
 * fleet publish of the head commit would change (nothing is delivered), shows
 * it, and publishes only when the operator confirms, all at once or staged.
 * Collectors whose config cannot be rendered are skipped by the publish (the
 * server lists them on the rollout and on their pages); the plan says so.
 */
import { useState, type FormEvent } from "react";
import type { PublishPlan, Rollout } from "../../../shared/rollouts.ts";
import { api } from "../client.ts";
import { useAction } from "../action.ts";
import { shortCommit } from "../format.ts";
import { ErrorMessage } from "../components/ErrorMessage.tsx";
import { PlanView } from "./PlanView.tsx";
import { StrategyFields } from "./StrategyFields.tsx";
import { DEFAULT_STRATEGY, plural, strategyFrom, type StrategyValues } from "./plan.ts";

/** What a publish answered, in words. */
export function publishedText(r: Rollout): string {
  const staged = r.batchEnds ? ` in ${plural(r.batchEnds.length, "batch", "batches")}` : "";
  const skipped = r.skipped?.length ? `; ${r.skipped.length} skipped` : "";
  return `Publishing commit ${shortCommit(r.commit)} to ${plural(r.collectorIds.length, "collector")}; ${r.changed.length} get${r.changed.length === 1 ? "s" : ""} a new config${staged}${skipped}.`;
}

interface Props {
  onPublished: (result: string) => void;
  /** A plan was fetched: its commit may be newer than the page shows (no event announces a commit). */
  onPlanned: () => void;
}

export function PublishPlanner({ onPublished, onPlanned }: Props) {
  const [plan, setPlan] = useState<PublishPlan | null>(null);
  const [strategy, setStrategy] = useState<StrategyValues>(DEFAULT_STRATEGY);
  const { busy, error, run } = useAction();

  function review() {
    run(
      () => api.post("/publish/plan", { body: {} }),
      (answer) => {
        setPlan(answer);
        onPlanned();
      },
    );
  }

  function confirm(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const staged = strategyFrom(strategy);
    run(
      () => api.post("/publish", { body: staged ? { strategy: staged } : {} }),
      (rollout) => {
        // Publish delivers the head: say so when a commit landed after the plan was made.
        const newer = plan && rollout.commit !== plan.commit ? ` It is newer than the reviewed plan's ${shortCommit(plan.commit)}.` : "";
        setPlan(null);
        onPublished(publishedText(rollout) + newer);
      },
    );
  }

  return (
    <div className="planner">
      {plan === null ? (
        <button type="button" className="button primary" disabled={busy} onClick={review}>
          Review and publish
        </button>
      ) : (
        <form className="plan-form" aria-label="Publish plan" onSubmit={confirm}>
          <h3>Publish plan</h3>
          <PlanView plan={plan} />
          {plan.changes.length > 0 && <StrategyFields values={strategy} onChange={setStrategy} />}
          {plan.errors.length > 0 && plan.changes.length > 0 && (
            <p className="hint">Collectors that cannot be rendered are skipped: they keep the config they run, and the rollout and their pages say why.</p>
          )}
          <div className="plan-actions">
            {plan.changes.length > 0 && (
              <button type="submit" className="button primary" disabled={busy}>
                Confirm and publish
              </button>
            )}
            <button type="button" className="button" disabled={busy} onClick={review}>
              Review again
            </button>
            <button type="button" className="button ghost" disabled={busy} onClick={() => setPlan(null)}>
              Cancel
            </button>
          </div>
        </form>
      )}
      <ErrorMessage error={error} />
    </div>
  );
}
