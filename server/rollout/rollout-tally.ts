/**
 * One rollout's counts by state and its failed collectors, kept current as
 * its collectors' targets and records change (ViewListeners on the target
 * index and the collectors view), with the answer StagedRollouts.status
 * gives (staged.ts `progress` over `collectorStates`): the dashboard asked
 * for the whole status of the latest fleet rollout on every refresh, a state
 * and an await per collector, 100,000 of them (issue 36 item 3).
 *
 * Each member's own state (rolloutState of its collector and target; none
 * when either is missing or its target says a later rollout took it over)
 * is kept as it changes. Which members are queued depends on the rollout's
 * released batch and on how far its publish has written (`q`, a position in
 * `changed`): every member at a `changed` position at or past `q` is queued
 * whatever its own state. So the own states of members in `changed` are
 * summed per position (a Fenwick tree per state), and the counts are read
 * for any `q` in a few steps; members not in `changed` are never queued.
 * A new version of the rollout's document (a batch released, a pause, its
 * end) keeps the tally when its members are the same (`follow`), else it is
 * a new tally.
 */
import { countBatch, type BatchCounts } from "./strategy.ts";
import { handedOn, rolloutState, type CollectorConfig, type Rollout, type RolloutCollectorState } from "./records.ts";
import type { Collector } from "../../shared/collectors.ts";

/** A member's own state, or null when it is not counted (no target or record, or handed on). */
type Own = { state: Exclude<RolloutCollectorState, "queued">; error: string | null } | null;
type OwnState = NonNullable<Own>["state"];
const OWN_STATES: readonly OwnState[] = ["current", "applying", "failed", "outdated", "offline", "reporting_only"];

/** Sums over positions, by prefix: add and read in log n steps. */
class Fenwick {
  private readonly tree: Int32Array;
  constructor(size: number) {
    this.tree = new Int32Array(size + 1);
  }
  add(at: number, delta: number): void {
    for (let i = at + 1; i < this.tree.length; i += i & -i) this.tree[i]! += delta;
  }
  /** The sum over positions [0, end). */
  prefix(end: number): number {
    let sum = 0;
    for (let i = end; i > 0; i -= i & -i) sum += this.tree[i]!;
    return sum;
  }
}

/** Numbers in ascending order (positions in collectorIds). */
class SortedPositions {
  readonly items: number[] = [];
  private indexOf(n: number): number {
    let lo = 0;
    let hi = this.items.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.items[mid]! < n) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
  set(n: number, member: boolean): void {
    const at = this.indexOf(n);
    const has = this.items[at] === n;
    if (member && !has) this.items.splice(at, 0, n);
    else if (!member && has) this.items.splice(at, 1);
  }
}

/** Where one collector's target and record are read: the target index and the collectors view, in memory. */
export interface TallyLookups {
  target(id: string): CollectorConfig | undefined;
  collector(id: string): Collector | undefined;
}

export class RolloutTally {
  /** Member id → its first position in collectorIds (the status lists in that order). */
  private readonly position = new Map<string, number>();
  /** Member id → its last position in `changed` (queued when at or past `q`). */
  private readonly changedAt = new Map<string, number>();
  private readonly own = new Map<string, Own>();
  /** Own states of members in `changed`, by position. */
  private readonly inChanged = new Map<OwnState, Fenwick>();
  /** Own states of members not in `changed`. */
  private readonly outside = countBatch([]);
  /** Members by their changed position: 1 at a member's `changedAt`, summed for the queued count. */
  private readonly anchors: Int32Array;
  private readonly failed = new SortedPositions();

  constructor(
    private current: Rollout,
    private readonly lookups: TallyLookups,
  ) {
    const rollout = current;
    rollout.collectorIds.forEach((id, i) => {
      if (!this.position.has(id)) this.position.set(id, i);
    });
    rollout.changed.forEach((id, i) => {
      if (this.position.has(id)) this.changedAt.set(id, i);
    });
    for (const state of OWN_STATES) this.inChanged.set(state, new Fenwick(rollout.changed.length));
    // anchors[i]: members whose last changed position is below i.
    const mark = new Uint8Array(rollout.changed.length);
    for (const at of this.changedAt.values()) mark[at] = 1;
    this.anchors = new Int32Array(rollout.changed.length + 1);
    for (let i = 0; i < mark.length; i++) this.anchors[i + 1] = this.anchors[i]! + mark[i]!;
    for (const id of this.position.keys()) this.update(id);
  }

  get rollout(): Rollout {
    return this.current;
  }

  /**
   * Takes `next`, a new version of the same rollout, when what the states
   * depend on is the same (its members, their order, `resumedBy`): one pass
   * of comparisons, not a judgement per member. False when it is not.
   */
  follow(next: Rollout): boolean {
    const same = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((id, i) => id === b[i]);
    const was = this.current;
    if (next.id !== was.id || next.resumedBy !== was.resumedBy || !same(next.collectorIds, was.collectorIds) || !same(next.changed, was.changed)) return false;
    this.current = next;
    return true;
  }

  /** Judges one member again (its target or record changed); not a member: nothing. */
  update(id: string): void {
    const position = this.position.get(id);
    if (position === undefined) return;
    const before = this.own.get(id);
    const after = this.judge(id);
    if (before?.state === after?.state && before?.error === after?.error && this.own.has(id)) return;
    this.own.set(id, after);
    const changed = this.changedAt.get(id);
    if (before) {
      if (changed === undefined) this.outside[before.state]--;
      else this.inChanged.get(before.state)!.add(changed, -1);
    }
    if (after) {
      if (changed === undefined) this.outside[after.state]++;
      else this.inChanged.get(after.state)!.add(changed, 1);
    }
    this.failed.set(position, after?.state === "failed");
  }

  /** Counts by state when the members at `changed` positions from `queuedFrom` on are queued (staged.ts collectorStates). */
  counts(queuedFrom: number): BatchCounts {
    const q = Math.max(0, Math.min(queuedFrom, this.current.changed.length));
    const counts = countBatch([]);
    for (const state of OWN_STATES) counts[state] = this.outside[state] + this.inChanged.get(state)!.prefix(q);
    counts.queued = this.anchors[this.current.changed.length]! - this.anchors[q]!;
    return counts;
  }

  /** The first `n` failed members not queued, in collectorIds order, with their errors. */
  failures(queuedFrom: number, n: number): { id: string; error: string | null }[] {
    const out: { id: string; error: string | null }[] = [];
    for (const position of this.failed.items) {
      if (out.length === n) break;
      const id = this.current.collectorIds[position]!;
      if ((this.changedAt.get(id) ?? -1) >= queuedFrom) continue;
      out.push({ id, error: this.own.get(id)?.error ?? null });
    }
    return out;
  }

  private judge(id: string): Own {
    const target = this.lookups.target(id);
    const collector = this.lookups.collector(id);
    if (!target || !collector || handedOn(this.rollout, target) === true) return null;
    return { state: rolloutState(collector, target) as OwnState, error: target.error || null };
  }
}
