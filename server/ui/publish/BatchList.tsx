/**
 * A staged rollout's batches in release order: each with its size, whether
 * it is released or queued, a bar of its collectors by state, and the counts
 * in words (the bar is decoration; the words carry the same facts).
 */
import { BATCH_STATES, batchCounts, plural, type Batch } from "./plan.ts";

export function BatchList({ batches }: { batches: Batch[] }) {
  return (
    <ol className="plain batches" aria-label="Batches">
      {batches.map((batch, i) => (
        <li key={i} className={batch.released ? "batch released" : "batch queued"}>
          <div className="batch-head">
            <strong>Batch {i + 1}</strong>
            <span className="muted">
              {plural(batch.size, "collector")} · {batch.released ? "released" : "queued"}
            </span>
            <span className="batch-counts">{batchCounts(batch)}</span>
          </div>
          <div className="batch-bar" aria-hidden="true">
            {BATCH_STATES.map((s) => {
              const n = batch.counts[s] ?? 0;
              return n > 0 && batch.size > 0 ? <span key={s} className={`seg seg-${s}`} style={{ width: `${(n / batch.size) * 100}%` }} /> : null;
            })}
          </div>
        </li>
      ))}
    </ol>
  );
}
