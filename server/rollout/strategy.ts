/**
 * Staged rollouts: how a publish's changed collectors are cut into batches
 * (a canary batch first, then fixed-size or percentage batches in id order)
 * and, from where each collector of the released batches stands, what the
 * rollout does next. Pure: the rollout service (rollout.ts) stores the
 * result and releases targets; this module only decides.
 */
import type { RolloutCollectorState, StoredStrategy, Strategy } from "../../shared/rollouts.ts";

export type { Strategy };

/**
 * A request's strategy as a rollout keeps it: no canary (resolved into the
 * first batch), and the defaults: no pause between batches, and any failure
 * pauses the rollout.
 */
export function storedStrategy(strategy: Strategy): StoredStrategy {
  return {
    ...(strategy.batchSize !== undefined ? { batchSize: strategy.batchSize } : {}),
    ...(strategy.batchPercent !== undefined ? { batchPercent: strategy.batchPercent } : {}),
    pauseSeconds: strategy.pauseSeconds ?? 0,
    failureThreshold: strategy.failureThreshold ?? 0,
  };
}

/**
 * The changed collectors in release order: the canary (those of them it
 * names, in id order) as the first batch, then the rest in id order in
 * batches of `batchSize`, or `batchPercent` of all changed collectors.
 */
export function cutBatches(changed: readonly string[], strategy: Strategy | StoredStrategy, canary: ReadonlySet<string> = new Set()): string[][] {
  const ordered = [...changed].sort();
  const first = ordered.filter((id) => canary.has(id));
  const rest = ordered.filter((id) => !canary.has(id));
  const size = Math.max(1, strategy.batchSize ?? Math.ceil(((strategy.batchPercent ?? 100) / 100) * ordered.length));
  const batches: string[][] = first.length > 0 ? [first] : [];
  for (let at = 0; at < rest.length; at += size) batches.push(rest.slice(at, at + size));
  return batches;
}

/**
 * What a rollout records to be staged: its strategy, where each batch ends,
 * and its first batch released; nothing when it goes out all at once (no
 * strategy, or one batch).
 */
export function stagedFields(strategy: Strategy | undefined, batches: readonly (readonly string[])[]) {
  if (!strategy || batches.length <= 1) return {};
  return {
    strategy: storedStrategy(strategy),
    batchEnds: batches.map((_, i) => batches.slice(0, i + 1).reduce((n, b) => n + b.length, 0)),
    released: 0,
    phase: "running" as const,
    pausedReason: null,
    settledAt: null,
  };
}

/** How one batch stands: counts by rollout state. */
export type BatchCounts = Record<RolloutCollectorState, number>;

export function countBatch(states: Iterable<RolloutCollectorState>): BatchCounts {
  const counts: BatchCounts = { current: 0, applying: 0, failed: 0, outdated: 0, offline: 0, reporting_only: 0, queued: 0 };
  for (const state of states) counts[state]++;
  return counts;
}

/** What a running rollout does next. */
export type Step =
  /** The batch is still applying, or its pause has not passed: look again later (at `until`, when set). */
  | { kind: "wait"; until?: number }
  /** Release batch `batch` (its collectors get their new targets). */
  | { kind: "release"; batch: number }
  /** Too many of the batch failed: stop releasing until resumed. */
  | { kind: "pause"; reason: string }
  /** Every batch is released and the last one is no longer applying. */
  | { kind: "complete" };

export interface Progress {
  strategy: StoredStrategy;
  /** How many batches the rollout has. */
  batches: number;
  /** Index of the last released batch. */
  released: number;
  /** When the released batch stopped applying (ms), once it has. */
  settledAt: number | null;
  /** Failures in batches up to this index were accepted by an operator's resume. */
  acceptedThrough: number;
}

/**
 * The next step from the last released batch's counts. Offline and
 * reporting-only collectors are counted apart: they never hold a batch back
 * and are not in the failure rate's denominator.
 */
export function nextStep(progress: Progress, counts: BatchCounts, now: number): Step {
  if (counts.applying + counts.outdated + counts.queued > 0) return { kind: "wait" };
  const reachable = counts.current + counts.failed;
  const accepted = progress.acceptedThrough >= progress.released;
  if (!accepted && reachable > 0 && (counts.failed / reachable) * 100 > progress.strategy.failureThreshold) {
    const percent = Math.round((counts.failed / reachable) * 1000) / 10;
    return {
      kind: "pause",
      reason: `${counts.failed} of ${reachable} collectors in batch ${progress.released + 1} failed (${percent} %, threshold ${progress.strategy.failureThreshold} %)`,
    };
  }
  if (progress.released === progress.batches - 1) return { kind: "complete" };
  const at = (progress.settledAt ?? now) + progress.strategy.pauseSeconds * 1000;
  return now >= at ? { kind: "release", batch: progress.released + 1 } : { kind: "wait", until: at };
}
