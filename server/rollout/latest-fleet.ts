/**
 * The dashboard's latest fleet rollout (the staged one with batches left,
 * else the latest publish to the fleet, as StagedRollouts.status "fleet"
 * picks it), its counts and first failures read from a tally kept current
 * beside the target index and the collectors view (rollout-tally.ts), so a
 * refresh reads nothing from the store and judges no collector. The
 * documents it needs (the two pointers, the rollout, 100,000 ids twice at
 * fleet scale, and its publish's write progress) are kept once read until
 * the change feed says one changed, as fresh as the target index itself:
 * a point read cost 4 ms on the 100,000-collector SQLite file of
 * bench/dashboard.ts (the WITHOUT ROWID docs table of this branch's base),
 * and the rollout's document is parsed whole (0.2 s).
 * This replica's own writes come with their documents and are kept as
 * written, so a publish here is never read back.
 */
import type { Dashboard } from "../../shared/dashboard.ts";
import type { RolloutStatus } from "../../shared/rollouts.ts";
import type { Collectors } from "../collectors/collectors.ts";
import type { Store } from "../store/store.ts";
import { ACTIVE, LATEST_FLEET, ROLLOUTS, WRITES, type Rollout, type RolloutWrite } from "./records.ts";
import { countBatch } from "./strategy.ts";
import { RolloutTally } from "./rollout-tally.ts";
import type { TargetIndex } from "./target-index.ts";

export class LatestFleetRollout {
  /** Documents read (null: absent), by collection and id, until the feed announces a change to one. */
  private readonly docs = new Map<string, unknown>();
  /** Bumped by every announced change to a kept collection: a read that a change overtook is not kept. */
  private generation = 0;
  private tally: RolloutTally | null = null;
  private readonly stops: (() => void)[];

  constructor(
    private readonly store: Store,
    private readonly collectors: Pick<Collectors, "counters" | "listen">,
    private readonly index: Pick<TargetIndex, "targetLookup" | "listen">,
  ) {
    const update = (id: string) => this.tally?.update(id);
    this.stops = [
      store.watch(
        (changes) => {
          for (const change of changes) {
            if (!KEPT.has(change.collection)) continue;
            this.generation++;
            const key = `${change.collection}/${change.id}`;
            // This replica's write carries its document (a publish's rollout: not read back); another's is read when asked.
            if (change.data !== undefined && (change.collection !== ACTIVE.collection || POINTERS.has(change.id))) this.keep(key, change.data);
            else this.docs.delete(key);
          }
        },
        () => {
          this.generation++;
          this.docs.clear();
        },
      ),
      collectors.listen({ put: (c) => update(c.id), remove: update }),
      index.listen({ put: (t) => update(t.collectorId), remove: update }),
    ];
  }

  /**
   * The latest fleet rollout as the dashboard shows it, with its first `n`
   * failures; null when no pointer names one (state written before the
   * pointers existed: StagedRollouts.status searches the rollouts then).
   */
  async summary(n: number): Promise<Dashboard["rollout"] | null> {
    const [targetOf, { lookup }] = await Promise.all([this.index.targetLookup(), this.collectors.counters()]);
    const rollout = await this.latest();
    if (rollout === null) return null;
    if (rollout === undefined)
      return { rolloutId: null, commit: null, state: "idle", staged: false, pausedReason: null, total: 0, counts: countBatch([]), batches: null, failures: [] };
    if (this.tally?.rollout !== rollout && !this.tally?.follow(rollout)) this.tally = new RolloutTally(rollout, { target: targetOf, collector: lookup });
    const tally = this.tally;
    await tally.ready;
    const writing = await this.doc<RolloutWrite>(WRITES, rollout.id);
    const unreleased = rollout.batchEnds?.[rollout.released ?? 0] ?? rollout.changed.length;
    const queuedFrom = Math.min(unreleased, writing?.written ?? unreleased);
    const counts = tally.counts(queuedFrom);
    const total = Object.values(counts).reduce((a, b) => a + b, 0);
    // As staged.ts `progress` judges it.
    const settled = counts.applying + counts.outdated + counts.queued === 0;
    const outcome = counts.failed > 0 ? "completed_with_errors" : "completed";
    const ends = rollout.batchEnds;
    const state = !ends
      ? settled
        ? outcome
        : "running"
      : rollout.phase === "paused" || rollout.phase === "aborted"
        ? rollout.phase
        : rollout.phase === "done" && settled
          ? outcome
          : "running";
    return {
      rolloutId: rollout.id,
      commit: rollout.commit,
      state,
      staged: ends !== undefined,
      pausedReason: (ends ? rollout.pausedReason : undefined) ?? null,
      total,
      counts,
      batches: ends ? { total: ends.length, released: ends.filter((_, i) => i <= (rollout.released ?? 0)).length } : null,
      failures: tally.failures(queuedFrom, n).map(({ id, error }) => ({ id, name: lookup(id)?.name ?? id, error })),
    };
  }

  close(): void {
    for (const stop of this.stops) stop();
    this.tally = null;
  }

  /** The staged rollout with batches left, else the one the latest-fleet pointer names (undefined: gone); null without either pointer. */
  private async latest(): Promise<Rollout | undefined | null> {
    const [active, pointer] = await Promise.all([
      this.doc<{ rolloutId: string }>(ACTIVE.collection, ACTIVE.id),
      this.doc<{ rolloutId: string }>(LATEST_FLEET.collection, LATEST_FLEET.id),
    ]);
    if (active) {
      const rollout = await this.doc<Rollout>(ROLLOUTS, active.rolloutId);
      if (rollout?.phase === "running" || rollout?.phase === "paused") return rollout;
    }
    if (!pointer) return null;
    return (await this.doc<Rollout>(ROLLOUTS, pointer.rolloutId)) ?? undefined;
  }

  /** A document's data, kept once read (null: absent) until the feed announces a change to it. */
  private async doc<T>(collection: string, id: string): Promise<T | null> {
    const key = `${collection}/${id}`;
    if (this.docs.has(key)) return this.docs.get(key) as T | null;
    const generation = this.generation;
    const data = (await this.store.get<T>(collection, id))?.data ?? null;
    if (generation === this.generation) this.keep(key, data);
    return data;
  }

  private keep(key: string, data: unknown): void {
    // Old rollouts and their progress are not looked at again: keep a handful.
    if (this.docs.size >= 8 && !this.docs.has(key)) this.docs.clear();
    this.docs.set(key, data);
  }
}

/** The collections whose documents are kept (`doc`): the pointers live in ACTIVE's and LATEST_FLEET's. */
const KEPT = new Set([ROLLOUTS, WRITES, ACTIVE.collection, LATEST_FLEET.collection]);
const POINTERS = new Set([ACTIVE.id, LATEST_FLEET.id]);

/**
 * A rollout's whole status as the dashboard shows it, with its first `n` failures by name: what a
 * dashboard refresh built before the tally (and still does when no pointer names the latest).
 */
export async function summaryOfStatus(
  status: RolloutStatus,
  n: number,
  nameOf: (collectorId: string) => Promise<string | undefined>,
): Promise<Dashboard["rollout"]> {
  const failed = status.collectors.filter((c) => c.state === "failed").slice(0, n);
  const failures = await Promise.all(failed.map(async (c) => ({ id: c.id, name: (await nameOf(c.id)) ?? c.id, error: c.error ?? null })));
  return {
    rolloutId: status.rolloutId,
    commit: status.commit,
    state: status.state,
    staged: status.batches !== undefined,
    pausedReason: status.pausedReason ?? null,
    total: status.total,
    counts: status.counts,
    batches: status.batches ? { total: status.batches.length, released: status.batches.filter((b) => b.released).length } : null,
    failures,
  };
}
