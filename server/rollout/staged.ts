/**
 * Staged rollouts and the progress of any rollout (strategy.ts decides, this
 * keeps and acts): a publish with a strategy releases its first batch and
 * queues the rest (rollout.ts); `advance` moves the active one on step by
 * step, pause, resume and abort change its phase, and `status` tells where
 * a rollout's collectors stand, computed from their targets so any replica
 * answers the same.
 */
import { auditEntry, SYSTEM_ACTOR, type Actor } from "../audit/audit.ts";
import type { Collectors } from "../collectors/collectors.ts";
import { ConflictError, NotFoundError } from "../errors.ts";
import { SCAN_SLICE_MS, Slices } from "../lib/next-turn.ts";
import type { Store, WriteOp } from "../store/store.ts";
import type { RolloutEnd, RolloutSummary } from "../../shared/rollouts.ts";
import { countBatch, nextStep } from "./strategy.ts";
import {
  ACTIVE,
  activeStagedRollout,
  CONFIGS,
  handedOn,
  LATEST,
  LATEST_FLEET,
  PENDING,
  ROLLOUTS,
  rolloutSkipped,
  rolloutState,
  targetWrites,
  WRITES,
  type CollectorConfig,
  type PendingTarget,
  type Rollout,
  type RolloutCollectorState,
  type RolloutStatus,
  type RolloutWrite,
} from "./records.ts";
import type { TargetHistory } from "./history.ts";
import type { TargetIndex } from "./target-index.ts";

/** A collector's target by its id, undefined when it has none. */
type TargetLookup = (collectorId: string) => CollectorConfig | undefined;

/** Where one collector stands in a rollout; `handedOn` when its target says whether a later rollout took it over. */
interface CollectorState {
  state: RolloutCollectorState;
  error?: string;
  handedOn?: boolean;
}

/** How much of a failed collector's message a pause reason quotes (the whole one is on the collector's target). */
const FAILURE_CHARS = 300;

export class StagedRollouts {
  private positions: { rolloutId: string; of: ReadonlyMap<string, number> } | null = null;

  constructor(
    private readonly store: Store,
    private readonly collectors: Collectors,
    private readonly history: Pick<TargetHistory, "rollback">,
    private readonly index: Pick<TargetIndex, "targetLookup" | "currentLookup">,
  ) {}

  /**
   * Progress of a rollout (when no id is given, the latest rollout of any
   * kind, or with `fleet` the staged rollout in progress or else the latest
   * publish to the fleet), computed from the targets so any replica answers
   * the same. Its collectors a later rollout gave another config are left
   * out (`handedOn`): their state says nothing of this one. The targets are
   * read from the in-memory index (target-index.ts), not the store: the
   * dashboard asks on every refresh.
   */
  async status(rolloutId?: string, which: "any" | "fleet" = "any"): Promise<RolloutStatus> {
    const rollout = rolloutId !== undefined ? await this.rollout(rolloutId) : which === "fleet" ? await this.latestFleet() : (await this.latest())?.data;
    if (!rollout) return { rolloutId: null, commit: null, state: "idle", total: 0, counts: countBatch([]), collectors: [], skipped: [] };
    return this.progress(rollout, new Set(), await this.index.targetLookup());
  }

  /**
   * `status` of `rollout`. `handedOnBefore`: collectors a later rollout
   * changed, for targets that do not name their rollout (recorded before
   * issue 34; RolloutEnds knows them from the rollouts it saw). `targetOf`:
   * where the targets are read, the store unless given.
   */
  private async progress(rollout: Rollout, handedOnBefore: ReadonlySet<string> = new Set(), targetOf?: TargetLookup): Promise<RolloutStatus> {
    const counts = countBatch([]);
    const states = await this.collectorStates(rollout, rollout.collectorIds, targetOf);
    const own = new Map<string, CollectorState>();
    const collectors: RolloutStatus["collectors"] = [];
    let passed = 0;
    for (const [id, entry] of states) {
      if (entry.handedOn ?? handedOnBefore.has(id)) {
        passed++;
        continue;
      }
      own.set(id, entry);
      const { state, error } = entry;
      counts[state]++;
      collectors.push(error ? { id, state, error } : { id, state });
    }
    const base = {
      rolloutId: rollout.id,
      commit: rollout.commit,
      total: collectors.length,
      counts,
      collectors,
      skipped: rolloutSkipped(rollout),
      ...(passed > 0 ? { handedOn: passed } : {}),
      ...(rollout.interrupted ? { interrupted: rollout.interrupted } : {}),
    };
    const settled = counts.applying + counts.outdated + counts.queued === 0;
    const outcome = counts.failed > 0 ? "completed_with_errors" : "completed";
    if (!rollout.batchEnds) return { ...base, state: settled ? outcome : "running" };
    const state = rollout.phase === "paused" || rollout.phase === "aborted" ? rollout.phase : rollout.phase === "done" && settled ? outcome : "running";
    return { ...base, state, batches: this.batchProgress(rollout, own), pausedReason: rollout.pausedReason ?? null, eta: this.eta(rollout) };
  }

  /**
   * Records that the rollout ended, once: aborted, or nothing of it left
   * applying, outdated or queued (a staged one: after its last batch), each
   * collector current or failed, or offline or reporting only. Collectors
   * handed on (a later rollout gave them its config before this one ended,
   * as their targets say or, for targets older than that, `handedOn`) are
   * left out of its counts (and counted as `handedOn`). Audited as
   * `rollout.end`. Answers whether it has ended (now or before); false while
   * it runs, or when another write came first (looked at again on the next
   * change). RolloutEnds (ends.ts) asks once the in-memory index says
   * nothing is left (`unsettled`); the targets read here decide.
   */
  async recordEnd(id: string, handedOn: ReadonlySet<string> = new Set()): Promise<boolean> {
    const doc = await this.store.get<Rollout>(ROLLOUTS, id);
    if (!doc || doc.data.ended) return true;
    const rollout = doc.data;
    const status = await this.progress(rollout, handedOn);
    const { counts } = status;
    const batchesLeft = rollout.batchEnds !== undefined && rollout.phase !== "done" && rollout.phase !== "aborted";
    let outcome: RolloutEnd["outcome"];
    if (rollout.phase === "aborted") outcome = "aborted";
    else if (batchesLeft || counts.applying + counts.outdated + counts.queued > 0) return false;
    else outcome = counts.failed > 0 ? "completed_with_errors" : "completed";
    const passed = status.handedOn ?? 0;
    const ended: RolloutEnd = { at: new Date().toISOString(), outcome, counts, ...(passed > 0 ? { handedOn: passed } : {}) };
    try {
      await this.store.write(
        [{ op: "put", collection: ROLLOUTS, id, data: { ...rollout, ended }, expect: doc.version }],
        [auditEntry(SYSTEM_ACTOR, "rollout.end", "rollout", id, { outcome, counts, ...(passed > 0 ? { handedOn: passed } : {}) })],
      );
      return true;
    } catch (error) {
      if (error instanceof ConflictError) return false;
      throw error;
    }
  }

  /**
   * Of `ids` (all of the rollout's collectors when absent), those the
   * in-memory index (every change announced so far in) still counts as
   * queued, outdated or applying for `rollout`, handed-on ones left out: a
   * first look for RolloutEnds, which keeps the answer and asks again only
   * for the collectors that change.
   */
  async unsettled(rollout: Rollout, handedOn: ReadonlySet<string>, ids: readonly string[] = rollout.collectorIds): Promise<Set<string>> {
    const states = await this.collectorStates(rollout, ids, await this.index.currentLookup());
    const out = new Set<string>();
    for (const [id, entry] of states) {
      if (entry.handedOn ?? handedOn.has(id)) continue;
      if (entry.state === "queued" || entry.state === "outdated" || entry.state === "applying") out.add(id);
    }
    return out;
  }

  /** A rollout by id; 404 when there is none. */
  async rollout(id: string): Promise<Rollout> {
    const doc = await this.store.get<Rollout>(ROLLOUTS, id);
    if (!doc) throw new NotFoundError("Rollout", id);
    return doc.data;
  }

  /** Rollouts newest first, a page at a time (`before`: the last id of the previous page). */
  async list(limit: number, before?: string): Promise<{ items: RolloutSummary[]; nextCursor: string | null }> {
    // Ids are UUIDv7, so id order is start order; the store lists ascending, so walk from the end.
    const all = (await this.store.list<Rollout>(ROLLOUTS)).map((d) => d.data).reverse();
    const from = before === undefined ? 0 : all.findIndex((r) => r.id < before);
    const page = from === -1 ? [] : all.slice(from, from + limit);
    const items = page.map(({ collectorIds, changed, skipped, pinned, ...rest }) => ({
      ...rest,
      collectors: collectorIds.length,
      changed: changed.length,
      skipped: skipped?.length ?? 0,
      pinned: pinned?.length ?? 0,
    }));
    return { items, nextCursor: from !== -1 && from + limit < all.length ? page[page.length - 1]!.id : null };
  }

  /**
   * The staged rollout with batches left (any kind: it holds publishes back
   * and has the controls), else the latest publish to the fleet; state
   * written before the pointer existed is searched, newest first.
   */
  private async latestFleet(): Promise<Rollout | undefined> {
    const active = await activeStagedRollout(this.store);
    if (active) return active.data;
    const pointer = await this.store.get<{ rolloutId: string }>(LATEST_FLEET.collection, LATEST_FLEET.id);
    if (pointer) return (await this.store.get<Rollout>(ROLLOUTS, pointer.data.rolloutId))?.data;
    const all = await this.store.list<Rollout>(ROLLOUTS);
    return all.map((d) => d.data).findLast((r) => r.kind === "publish" && r.scope === "fleet");
  }

  private async latest() {
    const latest = await this.store.get<{ rolloutId: string }>(LATEST.collection, LATEST.id);
    return latest ? this.store.get<Rollout>(ROLLOUTS, latest.data.rolloutId) : null;
  }

  /**
   * Where each of `ids` stands in `rollout`: queued when its staged batch is
   * not released or the publish's writes have not reached it yet, else by
   * its target, with whether that target says a later rollout took it over.
   * The targets are read from the store (what a decision must see), or by
   * `targetOf` when given.
   */
  private async collectorStates(rollout: Rollout, ids: readonly string[], targetOf?: TargetLookup): Promise<Map<string, CollectorState>> {
    const writing = await this.store.get<RolloutWrite>(WRITES, rollout.id);
    const unreleased = rollout.batchEnds?.[rollout.released ?? 0] ?? rollout.changed.length;
    // Queued: from this place in the write order on. A set of the ids past it was up to a fleet's worth per call.
    const from = Math.min(unreleased, writing?.data.written ?? unreleased);
    const position = this.positionsIn(rollout);
    const queued = (id: string) => (position.get(id) ?? -1) >= from;
    if (!targetOf) {
      const stored = await this.store.getMany<CollectorConfig>(
        CONFIGS,
        ids.filter((id) => !queued(id)),
      );
      targetOf = (id) => stored.get(id)?.data;
    }
    const out = new Map<string, CollectorState>();
    // A fleet's worth held the loop 150 ms in one piece (a rollout's first end look): in slices. A change meanwhile is
    // judged again (ends.ts keeps the collectors that changed since a look began).
    const slices = new Slices(SCAN_SLICE_MS);
    for (const id of ids) {
      if (slices.due) await slices.turn();
      if (queued(id)) {
        out.set(id, { state: "queued" });
        continue;
      }
      const target = targetOf(id);
      const collector = await this.collectors.get(id).catch(() => null);
      if (!target || !collector) continue;
      const passed = handedOn(rollout, target);
      out.set(id, {
        state: rolloutState(collector, target),
        ...(target.error ? { error: target.error } : {}),
        ...(passed !== undefined ? { handedOn: passed } : {}),
      });
    }
    return out;
  }

  /**
   * Each changed collector's place in `rollout.changed`, kept for the latest rollout asked about. Its write order
   * is fixed when it starts; recorded interrupted, it keeps a prefix of it (publish-writes.ts interruptedRollout).
   */
  private positionsIn(rollout: Rollout): ReadonlyMap<string, number> {
    const { id, changed } = rollout;
    if (this.positions?.rolloutId !== id || this.positions.of.size !== changed.length) {
      this.positions = { rolloutId: id, of: new Map(changed.map((collectorId, i) => [collectorId, i])) };
    }
    return this.positions.of;
  }

  private batchProgress(rollout: Rollout, states: ReadonlyMap<string, { state: RolloutCollectorState }>): NonNullable<RolloutStatus["batches"]> {
    const ends = rollout.batchEnds!;
    return ends.map((end, index) => {
      const ids = rollout.changed.slice(index === 0 ? 0 : ends[index - 1], end);
      return { size: ids.length, released: index <= (rollout.released ?? 0), counts: countBatch(ids.flatMap((id) => states.get(id)?.state ?? [])) };
    });
  }

  /** When the last batch should go out: the pace of the batches so far (or the pause alone), from now. */
  private eta(rollout: Rollout): string | null {
    if (rollout.phase !== "running") return null;
    const left = rollout.batchEnds!.length - 1 - (rollout.released ?? 0);
    const elapsed = Date.now() - Date.parse(rollout.startedAt);
    const perBatch = Math.max(elapsed / ((rollout.released ?? 0) + 1), rollout.strategy!.pauseSeconds * 1000);
    return new Date(Date.now() + left * perBatch).toISOString();
  }

  /**
   * Moves the latest staged rollout on by one step (strategy.ts `nextStep`):
   * records when its released batch settled, releases the next batch once
   * the pause has passed, pauses it when the batch failed past the threshold,
   * or marks it done. Any replica may call it: each step is a write that
   * expects the version it read, so one replica's step wins. Answers when to
   * look again at the latest (ms since the epoch), or null to wait for news.
   */
  async advance(): Promise<number | null> {
    const doc = await activeStagedRollout(this.store);
    if (doc?.data.phase !== "running") return null;
    const rollout = doc.data;
    const released = rollout.released ?? 0;
    const ends = rollout.batchEnds!;
    const batch = rollout.changed.slice(released === 0 ? 0 : ends[released - 1], ends[released]);
    const states = await this.collectorStates(rollout, batch);
    const counts = countBatch([...states.values()].map((s) => s.state));
    const now = Date.now();
    const settledAt = rollout.settledAt ? Date.parse(rollout.settledAt) : null;
    const step = nextStep(
      { strategy: rollout.strategy!, batches: ends.length, released, settledAt, acceptedThrough: rollout.acceptedThrough ?? -1 },
      counts,
      now,
    );
    const endActive: WriteOp = { op: "delete", collection: ACTIVE.collection, id: ACTIVE.id };
    const put = (data: Rollout, extra: WriteOp[] = []) => [...extra, { op: "put" as const, collection: ROLLOUTS, id: rollout.id, data, expect: doc.version }];
    try {
      if (step.kind === "wait") {
        const settled = counts.applying + counts.outdated + counts.queued === 0;
        if (settled && settledAt === null) {
          await this.store.write(put({ ...rollout, settledAt: new Date(now).toISOString() }));
          return now + rollout.strategy!.pauseSeconds * 1000;
        }
        return step.until ?? null;
      }
      if (step.kind === "pause") {
        const reason = step.reason + (await this.firstFailure(states));
        await this.store.write(put({ ...rollout, phase: "paused", pausedReason: reason }), [
          auditEntry(SYSTEM_ACTOR, "rollout.pause", "rollout", rollout.id, { batch: released, reason }),
        ]);
        return null;
      }
      if (step.kind === "complete") {
        await this.store.write(put({ ...rollout, phase: "done" }, [endActive]), [
          auditEntry(SYSTEM_ACTOR, "rollout.complete", "rollout", rollout.id, { batches: ends.length }),
        ]);
        return null;
      }
      const ids = rollout.changed.slice(ends[step.batch - 1], ends[step.batch]);
      const [pending, targets] = await Promise.all([
        this.store.getMany<PendingTarget>(
          PENDING,
          ids.map((id) => `${rollout.id}/${id}`),
        ),
        this.store.getMany<CollectorConfig>(CONFIGS, ids),
      ]);
      const time = new Date(now).toISOString();
      const ops: WriteOp[] = [];
      for (const id of ids) {
        const waiting = pending.get(`${rollout.id}/${id}`);
        if (!waiting) continue;
        ops.push({ op: "delete", collection: PENDING, id: waiting.id, expect: waiting.version });
        // Rolled back by an operator since the publish: it stays where it was put.
        if (targets.get(id)?.data.pinned) continue;
        const seq = (targets.get(id)?.data.targetSeq ?? 0) + 1;
        const commit = waiting.data.commit ?? rollout.commit;
        const cause = rollout.kind === "attributes" ? "attributes" : "publish";
        ops.push(...targetWrites(id, { seq, commit, hash: waiting.data.hash, time, state: "outdated", actor: rollout.actor, cause, rolloutId: rollout.id }));
      }
      await this.store.write(put({ ...rollout, released: step.batch, settledAt: null }, ops), [
        auditEntry(SYSTEM_ACTOR, "rollout.batch", "rollout", rollout.id, {
          batch: step.batch,
          collectors: ops.filter((op) => op.collection === CONFIGS).length,
        }),
      ]);
      return now;
    } catch (error) {
      // Another replica (or an operator's pause) moved the rollout first: look again.
      if (error instanceof ConflictError) return now;
      throw error;
    }
  }

  /** `; first: <name>: <its message>` for the batch's first failed collector (in release order), bounded; "" when none says why. */
  private async firstFailure(states: ReadonlyMap<string, { state: RolloutCollectorState; error?: string }>): Promise<string> {
    for (const [id, { state, error }] of states) {
      if (state !== "failed" || !error) continue;
      const name = (await this.collectors.get(id).catch(() => null))?.name ?? id;
      const message = error.length > FAILURE_CHARS ? `${error.slice(0, FAILURE_CHARS)}…` : error;
      return `; first: ${name}: ${message}`;
    }
    return "";
  }

  /** An operator pauses a running staged rollout: no batch is released until it is resumed. */
  async pause(who: Actor, id: string): Promise<Rollout> {
    return this.changePhase(who, id, "rollout.pause", (rollout) => {
      if (rollout.phase !== "running") throw new ConflictError(`Rollout ${id} is not running.`, "rollout_not_running");
      return { ...rollout, phase: "paused", pausedReason: `paused by ${who.actor}` };
    });
  }

  /** Resumes a paused staged rollout, accepting the failures of the batches released so far. */
  async resume(who: Actor, id: string): Promise<Rollout> {
    return this.changePhase(who, id, "rollout.resume", (rollout) => {
      if (rollout.phase !== "paused") throw new ConflictError(`Rollout ${id} is not paused.`, "rollout_not_paused");
      return { ...rollout, phase: "running", pausedReason: null, acceptedThrough: rollout.released ?? 0 };
    });
  }

  /**
   * Aborts a running or paused staged rollout: the batches not released
   * keep their config. With `rollbackFailed`, every released collector whose
   * new config failed is rolled back to the config before it.
   */
  async abort(who: Actor, id: string, rollbackFailed = false): Promise<{ rollout: Rollout; rolledBack: string[] }> {
    const current = await this.rollout(id);
    const queued = current.batchEnds ? current.changed.slice(current.batchEnds[current.released ?? 0]) : [];
    const rollout = await this.changePhase(
      who,
      id,
      "rollout.abort",
      (r) => {
        if (r.phase !== "running" && r.phase !== "paused") throw new ConflictError(`Rollout ${id} has no batches left to release.`, "rollout_not_running");
        return { ...r, phase: "aborted", pausedReason: null };
      },
      [
        ...queued.map((collectorId) => ({ op: "delete" as const, collection: PENDING, id: `${id}/${collectorId}` })),
        { op: "delete", collection: ACTIVE.collection, id: ACTIVE.id },
      ],
    );
    const rolledBack: string[] = [];
    if (rollbackFailed) {
      const released = rollout.changed.slice(0, rollout.batchEnds![rollout.released ?? 0]);
      for (const [collectorId, { state }] of await this.collectorStates(rollout, released)) {
        if (state !== "failed") continue;
        await this.history.rollback(who, collectorId, rollout);
        rolledBack.push(collectorId);
      }
    }
    return { rollout, rolledBack };
  }

  private async changePhase(who: Actor, id: string, action: string, change: (rollout: Rollout) => Rollout, extra: WriteOp[] = []): Promise<Rollout> {
    const doc = await this.store.get<Rollout>(ROLLOUTS, id);
    if (!doc) throw new NotFoundError("Rollout", id);
    if (!doc.data.batchEnds)
      throw new ConflictError(`Rollout ${id} was not staged; only staged rollouts can be paused, resumed or aborted.`, "rollout_not_staged");
    const next = change(doc.data);
    await this.store.write(
      [...extra, { op: "put", collection: ROLLOUTS, id, data: next, expect: doc.version }],
      [auditEntry(who, action, "rollout", id, { batch: next.released ?? 0 })],
    );
    return next;
  }
}
