/**
 * One collector's config history and what an operator does with it: read it,
 * roll back to the previous config (pinning the collector there), unpin, and
 * offer again a target the collector rolled back from (docs/architecture.md
 * "The configuration lifecycle"). Each writes the target in the store; the
 * channels hear of it through the change feed (target-delivery.ts).
 */
import { auditEntry, type Actor } from "../audit/audit.ts";
import type { Collectors } from "../collectors/collectors.ts";
import { ConflictError, NotFoundError } from "../errors.ts";
import type { Store, WriteOp } from "../store/store.ts";
import type { HistoryEntry as HistoryView, Rollout } from "../../shared/rollouts.ts";
import {
  CONFIGS,
  HISTORY,
  historyId,
  historyState,
  RENDER_FAILURES,
  rolloutOps,
  targetWrites,
  type CollectorConfig,
  type HistoryEntry,
  type RenderFailure,
} from "./records.ts";
import { storedRendered } from "./stored-rendered.ts";
import type { RenderedConfig } from "./renderer.ts";

export class TargetHistory {
  constructor(
    private readonly store: Store,
    private readonly collectors: Pick<Collectors, "get">,
  ) {}

  /** Every config pushed to a collector, oldest first. */
  async history(collectorId: string): Promise<HistoryEntry[]> {
    await this.collectors.get(collectorId);
    return (await this.store.list<HistoryEntry>(HISTORY, { prefix: `${collectorId}/` })).map((d) => d.data);
  }

  /** Why the collector's config could not be rendered again after its attributes changed, while that stands. */
  async renderFailure(collectorId: string): Promise<RenderFailure | null> {
    return (await this.store.get<RenderFailure>(RENDER_FAILURES, collectorId))?.data ?? null;
  }

  /**
   * The history as operators read it: each entry's state says what became of
   * it (historyStates), not only where it stood when it was replaced.
   */
  async historyView(collectorId: string): Promise<HistoryView[]> {
    const entries = await this.history(collectorId);
    return entries.map((entry, i) => ({ ...entry, state: historyState(entry, entries[i + 1]), applied: entry.state === "current" }));
  }

  /** A rendered config by its hash, as stored now (stored-rendered.ts `storedRendered`): what a history entry shows. */
  storedRendered(hash: string): Promise<RenderedConfig | null> {
    return storedRendered(this.store, hash);
  }

  /**
   * Re-targets the collector's previous config (the last other one it
   * applied), recorded as a new history entry, and pins it there. `within`:
   * the staged rollout being aborted, which it is then recorded under.
   */
  async rollback(who: Actor, collectorId: string, within?: Rollout): Promise<HistoryEntry> {
    const history = await this.history(collectorId);
    const current = history[history.length - 1];
    // The last other config it applied (a failed one is no place to go back to), else the last other one pushed.
    const earlier = current ? [...history].reverse().filter((entry) => entry.hash !== current.hash) : [];
    const previous = earlier.find((entry) => entry.state === "current") ?? earlier[0];
    if (!current || !previous) {
      throw new ConflictError("This collector has no previous pushed config to roll back to.", "no_previous_config");
    }
    const rendered = await storedRendered(this.store, previous.hash);
    if (!rendered) throw new NotFoundError("Rendered config", previous.hash);
    const now = new Date().toISOString();
    const id = Bun.randomUUIDv7();
    const entry: HistoryEntry = {
      seq: current.seq + 1,
      commit: previous.commit,
      hash: previous.hash,
      time: now,
      state: "outdated",
      actor: who.actor,
      rollbackOf: previous.seq,
      cause: "rollback",
      // Within an aborted staged rollout, the target counts for that rollout.
      rolloutId: within?.id ?? id,
    };
    const rollout: Rollout = {
      id,
      kind: "rollback",
      commit: previous.commit,
      actor: who.actor,
      startedAt: now,
      scope: collectorId,
      collectorIds: [collectorId],
      changed: [collectorId],
    };
    // Rolled back as part of aborting a staged rollout, it stays that rollout's step rather than becoming the latest rollout.
    await this.store.write(
      [...targetWrites(collectorId, entry, undefined, { at: now, actor: who.actor }), ...(within ? [] : rolloutOps(rollout))],
      [
        auditEntry(who, "config.rollback", "collector", collectorId, {
          toSeq: previous.seq,
          commit: previous.commit,
          hash: previous.hash,
          pinned: true,
          ...(within ? { rollout: within.id } : {}),
        }),
      ],
    );
    return entry;
  }

  /** Lets fleet publishes reach a rolled-back collector again; its config stays as it is until the next one. */
  async unpin(who: Actor, collectorId: string): Promise<void> {
    await this.collectors.get(collectorId);
    const doc = await this.store.get<CollectorConfig>(CONFIGS, collectorId);
    if (!doc?.data.pinned) throw new ConflictError("This collector is not pinned.", "not_pinned");
    const { pinned: _, ...rest } = doc.data;
    await this.store.write(
      [{ op: "put", collection: CONFIGS, id: collectorId, data: rest, expect: doc.version }],
      [auditEntry(who, "config.unpin", "collector", collectorId, { seq: rest.targetSeq })],
    );
  }

  /**
   * Offers a target the collector rolled back from again (it is not offered
   * on its own, so a config that fails is not re-sent in a loop).
   */
  async retry(who: Actor, collectorId: string): Promise<void> {
    await this.collectors.get(collectorId);
    const doc = await this.store.get<CollectorConfig>(CONFIGS, collectorId);
    if (!doc?.data.collectorRollback)
      throw new ConflictError("The collector did not roll back from its target; there is nothing to retry.", "nothing_to_retry");
    const { collectorRollback: _, ...rest } = doc.data;
    const entry = await this.store.get<HistoryEntry>(HISTORY, historyId(collectorId, rest.targetSeq));
    // The entry is offered again: what the collector did with it last time is no longer what became of it.
    const history: WriteOp[] = [];
    if (entry) {
      const { collectorRolledBackTo: __, error: ___, ...again } = entry.data;
      history.push({ op: "put", collection: HISTORY, id: entry.id, data: { ...again, state: "outdated" }, expect: entry.version });
    }
    await this.store.write(
      [
        {
          op: "put",
          collection: CONFIGS,
          id: collectorId,
          data: { ...rest, state: "outdated", error: null, retries: (rest.retries ?? 0) + 1, updatedAt: new Date().toISOString() },
          expect: doc.version,
        },
        ...history,
      ],
      [auditEntry(who, "config.retry", "collector", collectorId, { seq: rest.targetSeq })],
    );
  }
}
