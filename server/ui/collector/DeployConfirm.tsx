/**
 * An edit of collector records that changes what collectors run is a
 * deployment (issue 33): before it applies, its plan is shown (which
 * collectors change, the diff, who is skipped and why), and it applies only
 * when the operator confirms, all at once or, when the edit is one call,
 * staged as a publish is. The server delivers it as a rollout of kind
 * attributes and refuses it without the config:publish scope.
 */
import { useState, type FormEvent } from "react";
import type { PublishPlan, Strategy } from "../../../shared/rollouts.ts";
import { PlanView } from "../publish/PlanView.tsx";
import { StrategyFields } from "../publish/StrategyFields.tsx";
import { DEFAULT_STRATEGY, plural, strategyFrom, type StrategyValues } from "../publish/plan.ts";

interface Props {
  /** What the edit does, in words: the form's name and heading. */
  label: string;
  plan: PublishPlan;
  /** Whether it may be staged (one call; several calls would be several rollouts). */
  stageable: boolean;
  busy: boolean;
  onApply: (strategy: Strategy | undefined) => void;
  onCancel: () => void;
}

export function DeployConfirm({ label, plan, stageable, busy, onApply, onCancel }: Props) {
  const [strategy, setStrategy] = useState<StrategyValues>(DEFAULT_STRATEGY);
  const n = plan.changes.length;

  function apply(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    onApply(stageable ? strategyFrom(strategy) : undefined);
  }

  return (
    <form className="plan-form" aria-label={label} onSubmit={apply}>
      <h3>{label}</h3>
      <p>
        This edit changes the config of {plural(n, "collector")}: once applied it is delivered to {n === 1 ? "it" : "them"} as a rollout, listed with the
        others.
      </p>
      <PlanView plan={plan} />
      {stageable && <StrategyFields values={strategy} onChange={setStrategy} />}
      {plan.errors.length > 0 && (
        <p className="hint">Collectors that cannot be rendered are skipped: they keep the config they run, and the rollout and their pages say why.</p>
      )}
      <div className="plan-actions">
        <button type="submit" className="button primary" disabled={busy}>
          Apply and deliver
        </button>
        <button type="button" className="button ghost" disabled={busy} onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
