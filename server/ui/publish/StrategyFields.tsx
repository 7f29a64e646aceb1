/**
 * How a publish goes out: all at once, or staged in batches (a number or a
 * share of the changed collectors each), with a pause between batches, the
 * share of a batch that may fail before the rollout pauses itself, and an
 * optional canary batch chosen by matchers. Controlled: the planner owns the
 * values and turns them into the request (plan.ts `strategyFrom`).
 */
import type { StrategyValues } from "./plan.ts";

interface Props {
  values: StrategyValues;
  onChange: (values: StrategyValues) => void;
}

export function StrategyFields({ values, onChange }: Props) {
  const set = <K extends keyof StrategyValues>(key: K, value: StrategyValues[K]) => onChange({ ...values, [key]: value });
  const staged = values.mode === "staged";
  return (
    <fieldset className="strategy">
      <legend>How to roll out</legend>
      <div className="strategy-modes">
        <label>
          <input type="radio" name="strategy-mode" checked={!staged} onChange={() => set("mode", "all")} /> All at once
        </label>
        <label>
          <input type="radio" name="strategy-mode" checked={staged} onChange={() => set("mode", "staged")} /> Staged
        </label>
      </div>
      {staged && (
        <div className="strategy-fields">
          <div className="field">
            <label htmlFor="strategy-batch-by">Batch by</label>
            <select id="strategy-batch-by" value={values.batchBy} onChange={(e) => set("batchBy", e.currentTarget.value as StrategyValues["batchBy"])}>
              <option value="size">Number of collectors</option>
              <option value="percent">Percent of the changed collectors</option>
            </select>
          </div>
          <div className="field">
            <label htmlFor="strategy-batch">{values.batchBy === "size" ? "Batch size" : "Batch percent"}</label>
            <input
              id="strategy-batch"
              type="number"
              required
              min={values.batchBy === "size" ? 1 : 0.1}
              max={values.batchBy === "size" ? 1_000_000 : 100}
              step={values.batchBy === "size" ? 1 : "any"}
              value={values.batch}
              onChange={(e) => set("batch", e.currentTarget.value)}
            />
          </div>
          <div className="field">
            <label htmlFor="strategy-pause">Pause between batches (seconds)</label>
            <input
              id="strategy-pause"
              type="number"
              min={0}
              max={86_400}
              step={1}
              value={values.pauseSeconds}
              onChange={(e) => set("pauseSeconds", e.currentTarget.value)}
            />
          </div>
          <div className="field">
            <label htmlFor="strategy-threshold">Failure threshold (%)</label>
            <input
              id="strategy-threshold"
              type="number"
              min={0}
              max={100}
              step="any"
              aria-describedby="strategy-threshold-hint"
              value={values.failureThreshold}
              onChange={(e) => set("failureThreshold", e.currentTarget.value)}
            />
            <p id="strategy-threshold-hint" className="hint">
              The rollout pauses itself when more of a batch fails; 0 pauses on any failure.
            </p>
          </div>
          <div className="field wide">
            <label htmlFor="strategy-canary">Canary matchers (optional, one per line)</label>
            <textarea
              id="strategy-canary"
              rows={2}
              placeholder={'environment=canary\nregion=~"eu-.*"'}
              aria-describedby="strategy-canary-hint"
              value={values.canary}
              onChange={(e) => set("canary", e.currentTarget.value)}
            />
            <p id="strategy-canary-hint" className="hint">
              The changed collectors these match go first, as a batch of their own.
            </p>
          </div>
        </div>
      )}
    </fieldset>
  );
}
