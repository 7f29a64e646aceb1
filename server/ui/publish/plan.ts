/**
 * The words and request bodies of the publish flow, kept apart from the
 * components so they read (and are tested) as plain functions.
 */
import type { PublishPlan, RolloutStatus, Strategy } from "../../../shared/rollouts.ts";

export const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** "3 collectors change in 2 ways, 1 unchanged, 1 pinned and skipped, 1 cannot be rendered." */
export function planSummary(plan: PublishPlan): string {
  const n = plan.changes.length;
  const parts = [n === 0 ? "No collector changes" : `${plural(n, "collector")} change${n === 1 ? "s" : ""} in ${plural(plan.groups.length, "way")}`];
  parts.push(`${plan.unchanged} unchanged`);
  if (plan.pinned.length > 0) parts.push(`${plan.pinned.length} pinned and skipped`);
  if (plan.errors.length > 0) parts.push(`${plan.errors.length} cannot be rendered`);
  if (plan.lacking.length > 0) parts.push(`${plan.lacking.length} lack a component and are skipped`);
  if (plan.differences.length > 0)
    parts.push(`${plural(plan.differences.length, "source type")} deliver${plan.differences.length === 1 ? "s" : ""} other data on Alloy`);
  return `${parts.join(", ")}.`;
}

/**
 * Several plans (one per call of an edit made in parts) read as one: changes
 * and groups together, equal diffs one group; null when there is none.
 */
export function mergePlans(plans: readonly PublishPlan[]): PublishPlan | null {
  if (plans.length === 0) return null;
  const merged: PublishPlan = { commit: plans[0]!.commit, changes: [], groups: [], unchanged: 0, pinned: [], errors: [], lacking: [], differences: [] };
  const groupOf = new Map<string, number>();
  for (const plan of plans) {
    const index = plan.groups.map((group) => {
      let at = groupOf.get(group.diff);
      if (at === undefined) {
        at = merged.groups.push({ diff: group.diff, collectorIds: [] }) - 1;
        groupOf.set(group.diff, at);
      }
      merged.groups[at]!.collectorIds.push(...group.collectorIds);
      return at;
    });
    merged.changes.push(...plan.changes.map((change) => ({ ...change, group: index[change.group]! })));
    merged.unchanged += plan.unchanged;
    merged.pinned.push(...plan.pinned);
    merged.errors.push(...plan.errors);
    merged.lacking.push(...plan.lacking);
    for (const d of plan.differences) {
      const same = merged.differences.find((m) => m.sourceType === d.sourceType);
      if (same) same.collectorIds.push(...d.collectorIds);
      else merged.differences.push({ ...d, collectorIds: [...d.collectorIds] });
    }
  }
  return merged;
}

/** The strategy form as typed: strings, because number inputs may be blank while edited. */
export interface StrategyValues {
  mode: "all" | "staged";
  batchBy: "size" | "percent";
  batch: string;
  pauseSeconds: string;
  failureThreshold: string;
  /** Canary matchers, one per line. */
  canary: string;
}

export const DEFAULT_STRATEGY: StrategyValues = { mode: "all", batchBy: "size", batch: "10", pauseSeconds: "0", failureThreshold: "0", canary: "" };

/**
 * The request's strategy, or none for all at once. The inputs' own limits
 * (required, min, max) have been checked by the form; the server checks again
 * and names the field when something is still wrong.
 */
export function strategyFrom(values: StrategyValues): Strategy | undefined {
  if (values.mode === "all") return undefined;
  const canary = values.canary
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "");
  return {
    ...(values.batchBy === "size" ? { batchSize: Number(values.batch) } : { batchPercent: Number(values.batch) }),
    pauseSeconds: Number(values.pauseSeconds || 0),
    failureThreshold: Number(values.failureThreshold || 0),
    ...(canary.length > 0 ? { canary: { match: canary } } : {}),
  };
}

export type Batch = NonNullable<RolloutStatus["batches"]>[number];

/** The states a batch's bar and counts show, in the order they read. */
export const BATCH_STATES = ["current", "applying", "outdated", "failed", "offline", "reporting_only", "queued"] as const;

/** "4 current, 1 failed": the batch's non-zero counts. */
export function batchCounts(batch: Batch): string {
  const parts = BATCH_STATES.filter((s) => (batch.counts[s] ?? 0) > 0).map((s) => `${batch.counts[s]} ${s.replace("_", " ")}`);
  return parts.length > 0 ? parts.join(", ") : "no collectors";
}

/** "Batch 2 of 4": how many batches are released; null for a rollout that is not staged. */
export function batchPosition(status: RolloutStatus): string | null {
  if (!status.batches) return null;
  return `batch ${status.batches.filter((b) => b.released).length} of ${status.batches.length}`;
}
