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
import { SCAN_SLICE_MS, Slices } from "../lib/next-turn.ts";
import { SortedIds } from "../lib/sorted-ids.ts";

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

/** One member of the rollout. */
interface Member {
  /** First position in collectorIds (the status lists in that order). */
  position: number;
  /** Last position in `changed` (queued when at or past the boundary), -1 when not in it. */
  changedAt: number;
  own: Own;
  /** Judged at least once (`own` is its state, not the initial null). */
  judged: boolean;
}

/** Where one collector's target and record are read: the target index and the collectors view, in memory. */
export interface TallyLookups {
  target(id: string): CollectorConfig | undefined;
  collector(id: string): Collector | undefined;
}

export class RolloutTally {
  /** Each member by id: a Map operation or two per member and change, the most of the cost at 100,000. */
  private readonly members = new Map<string, Member>();
  /** Own states of members in `changed`, by position (index: OWN_STATES). */
  private readonly inChanged: Fenwick[];
  /** Own states of members not in `changed`. */
  private readonly outside = countBatch([]);
  /** anchors[i]: members whose `changed` position is below i (for the queued count). */
  private anchors = new Int32Array(1);
  private readonly failed = new SortedIds<number>();
  /** Set once every member is registered: changes are judged from then on. */
  private judging = false;
  /**
   * Settles once every member is judged. Built in slices of SCAN_SLICE_MS
   * (a fleet rollout has 100,000 members: the build held the event loop for
   * 0.4 s); a change heard meanwhile is judged at once or in its turn.
   */
  readonly ready: Promise<void>;

  constructor(
    private current: Rollout,
    private readonly lookups: TallyLookups,
  ) {
    this.inChanged = OWN_STATES.map(() => new Fenwick(current.changed.length));
    this.ready = this.build();
  }

  private async build(): Promise<void> {
    const { collectorIds, changed } = this.current;
    const slices = new Slices(SCAN_SLICE_MS);
    for (let i = 0; i < collectorIds.length; i++) {
      const id = collectorIds[i]!;
      if (!this.members.has(id)) this.members.set(id, { position: i, changedAt: -1, own: null, judged: false });
      if ((i & 1023) === 1023 && slices.due) await slices.turn();
    }
    const mark = new Uint8Array(changed.length);
    for (let i = 0; i < changed.length; i++) {
      const member = this.members.get(changed[i]!);
      if (member) {
        if (member.changedAt >= 0) mark[member.changedAt] = 0;
        member.changedAt = i;
        mark[i] = 1;
      }
      if ((i & 1023) === 1023 && slices.due) await slices.turn();
    }
    const anchors = new Int32Array(changed.length + 1);
    for (let i = 0; i < mark.length; i++) anchors[i + 1] = anchors[i]! + mark[i]!;
    this.anchors = anchors;
    this.judging = true;
    let i = 0;
    for (const [id, member] of this.members) {
      if (!member.judged) this.judgeMember(id, member);
      if ((++i & 1023) === 0 && slices.due) await slices.turn();
    }
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
    if (!this.judging) return; // judged when the build comes to it
    const member = this.members.get(id);
    if (member) this.judgeMember(id, member);
  }

  private judgeMember(id: string, member: Member): void {
    const before = member.own;
    const after = this.judge(id);
    if (member.judged && before?.state === after?.state && before?.error === after?.error) return;
    member.judged = true;
    member.own = after;
    const at = member.changedAt;
    if (before) {
      if (at < 0) this.outside[before.state]--;
      else this.inChanged[OWN_STATES.indexOf(before.state)]!.add(at, -1);
    }
    if (after) {
      if (at < 0) this.outside[after.state]++;
      else this.inChanged[OWN_STATES.indexOf(after.state)]!.add(at, 1);
    }
    this.failed.set(member.position, after?.state === "failed");
  }

  /** Counts by state when the members at `changed` positions from `queuedFrom` on are queued (staged.ts collectorStates). */
  counts(queuedFrom: number): BatchCounts {
    const q = Math.max(0, Math.min(queuedFrom, this.current.changed.length));
    const counts = countBatch([]);
    OWN_STATES.forEach((state, i) => (counts[state] = this.outside[state] + this.inChanged[i]!.prefix(q)));
    counts.queued = this.anchors[this.current.changed.length]! - this.anchors[q]!;
    return counts;
  }

  /** The first `n` failed members not queued, in collectorIds order, with their errors. */
  failures(queuedFrom: number, n: number): { id: string; error: string | null }[] {
    const out: { id: string; error: string | null }[] = [];
    for (const position of this.failed.values()) {
      if (out.length === n) break;
      const id = this.current.collectorIds[position]!;
      const member = this.members.get(id)!;
      if (member.changedAt >= queuedFrom) continue;
      out.push({ id, error: member.own?.error ?? null });
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
