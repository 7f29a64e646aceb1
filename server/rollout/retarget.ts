/**
 * Attribute changes are config changes (docs/architecture.md "The configuration
 * lifecycle"). When a write on this replica changes what a render reads of a
 * collector and no operator's deployment carried it (Collectors.onAttributesChanged:
 * a collector joining, a reconnect with a new description; an operator's tag
 * edit is planned and deployed by attribute-rollout.ts), the collector is
 * rendered again at the commit it is on and, where the hash differs from its
 * target, gets a new target and history entry (cause "attributes", actor
 * system), delivered as a publish is: the channels follow
 * Delivery.onTargetChanged. Each batch that changes or skips a collector is
 * recorded as a rollout of kind "attributes", listed with the others (it does
 * not become the latest rollout /publish/status follows: that stays the
 * operators' last). Only the writing replica hears the change, so one
 * replica does the work.
 *
 * Ids are collected in a set and drained in batches of BATCH, one store write
 * (and one `config.retarget` audit entry) each, so a reconnect storm of new
 * descriptions costs a render-cache hit per collector whose config did not
 * change. A render that fails (an attribute the config needs is missing, a
 * pipeline Alloy cannot run) leaves the target as it is and is kept as the
 * collector's RenderFailure, logged when it is new.
 */
import type { Logger } from "pino";
import type { Collector } from "../../shared/collectors.ts";
import type { SkippedCollector } from "../../shared/rollouts.ts";
import { auditEntry, SYSTEM_ACTOR } from "../audit/audit.ts";
import type { Collectors } from "../collectors/collectors.ts";
import type { TrustedKeys } from "../collectors/attributes.ts";
import { matchedPipelineIds, matcherPipelines, type MatchedPipeline } from "../collectors/matching.ts";
import type { ConfigStore } from "../configstore/configstore.ts";
import type { Snapshot } from "../configstore/layout.ts";
import { AppError, ConflictError, NotFoundError } from "../errors.ts";
import { BoundedMap } from "../lib/bounded-map.ts";
import type { Doc, Store, WriteOp } from "../store/store.ts";
import { fleetRenderer, type RenderedConfig } from "./renderer.ts";
import {
  ACTIVE,
  CONFIGS,
  latestFleetPublish,
  PENDING,
  ROLLOUTS,
  type PendingTarget,
  type Rollout,
  RENDER_FAILURES,
  targetWrites,
  type CollectorConfig,
  type FleetPublish,
  type RenderFailure,
} from "./records.ts";
import { unstoredWrites } from "./stored-rendered.ts";

/** Collectors per store write. */
const BATCH = 500;
/** Commits whose renderer is kept: the fleet's, and one a rolled-back collector is on. */
const KEPT_COMMITS = 2;
/** Writes of one batch tried again after a concurrent write to one of its targets. */
const RETRIES = 2;
/** Changes gathered before the first batch, so a create and its first report render once. */
const GATHER_MS = 10;

/** One commit, parsed and ready to render. */
export interface AtCommit {
  snapshot: Snapshot;
  render: (collector: Collector) => RenderedConfig;
  /** Collectors its activations or routes name. */
  named: Set<string>;
  withMatchers: MatchedPipeline[];
  /** The reported keys matchers may read now (collectors/trust.ts). */
  trusted: () => TrustedKeys;
}

/**
 * The commit a collector is on: its target's, when that was recorded after
 * the latest fleet publish (a rollback, one collector's publish, an earlier
 * retarget); else the fleet publish's, which rendered it (a publish records a
 * target only where the hash changed, so an older target's commit is not the
 * one it is on). Null: nothing was ever published to it.
 */
export function currentCommit(target: CollectorConfig | undefined, fleet: FleetPublish | null): string | null {
  if (target && (fleet === null || (target.targetAt ?? "") > fleet.at)) return target.targetCommit;
  return fleet?.commit ?? null;
}

/** Whether the commit's config reaches the collector: a record names it or a pipeline's matchers select it. */
export function reaches(at: AtCommit, collector: Collector): boolean {
  return at.named.has(collector.id) || matchedPipelineIds(collector, at.withMatchers, at.trusted()).length > 0;
}

/** The scope a rollout of these collectors names: the one collector's id, or "collectors". */
export function collectorsScope(ids: readonly string[]): string {
  return ids.length === 1 ? ids[0]! : "collectors";
}

export class Retargeting {
  private readonly pending = new Set<string>();
  /** The ids of the batch being rendered. */
  private batching: ReadonlySet<string> = new Set();
  private draining: Promise<void> | null = null;
  private readonly commits = new BoundedMap<string, Promise<AtCommit>>(KEPT_COMMITS);
  private closed = false;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly store: Store,
    private readonly config: ConfigStore,
    private readonly collectors: Collectors,
    private readonly log: Logger,
  ) {
    this.unsubscribe = collectors.onAttributesChanged((ids) => this.enqueue(ids));
  }

  /** Stops taking changes and waits for the batch in flight; what is still queued is dropped (a publish renders it). */
  async close(): Promise<void> {
    this.closed = true;
    this.unsubscribe();
    await this.draining;
  }

  /** Resolves once every queued change was handled. */
  async idle(): Promise<void> {
    while (this.draining) await this.draining;
  }

  /** Resolves once a change queued for this collector was handled (at once when none is). */
  async settled(id: string): Promise<void> {
    while (this.draining && (this.pending.has(id) || this.batching.has(id))) await this.draining;
  }

  /** The snapshot of the latest fleet publish, or null before the first (read through the renderers' cache). */
  async publishedSnapshot(): Promise<Snapshot | null> {
    const fleet = await latestFleetPublish(this.store);
    return fleet && (await this.at(fleet.commit)).snapshot;
  }

  private enqueue(ids: readonly string[]): void {
    if (this.closed) return;
    for (const id of ids) this.pending.add(id);
    this.draining ??= this.drain();
  }

  private async drain(): Promise<void> {
    await Bun.sleep(GATHER_MS);
    while (this.pending.size > 0 && !this.closed) {
      const ids: string[] = [];
      for (const id of this.pending) {
        this.pending.delete(id);
        ids.push(id);
        if (ids.length === BATCH) break;
      }
      this.batching = new Set(ids);
      try {
        await this.batch(ids);
      } catch (error) {
        // Not retried: a change made later queues its collectors again, and a publish renders them all.
        this.log.error({ err: error, collectors: ids.length }, "retarget: rendering collectors again after their attributes changed failed");
      }
    }
    // In the same tick as the last size check, so a change queued from now on starts a new drain.
    this.batching = new Set();
    this.draining = null;
  }

  private async batch(ids: string[]): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.attempt(ids);
      } catch (error) {
        // A publish, rollback or the collector's own report moved one of these targets meanwhile: read them again.
        if (!(error instanceof ConflictError) || attempt === RETRIES) throw error;
      }
    }
  }

  private async attempt(ids: string[]): Promise<void> {
    const fleet = await latestFleetPublish(this.store);
    const active = (await this.store.get<{ rolloutId: string }>(ACTIVE.collection, ACTIVE.id))?.data.rolloutId;
    const [targets, failures, pending] = await Promise.all([
      this.store.getMany<CollectorConfig>(CONFIGS, ids),
      this.store.getMany<RenderFailure>(RENDER_FAILURES, ids),
      active
        ? this.store.getMany<PendingTarget>(
            PENDING,
            ids.map((id) => `${active}/${id}`),
          )
        : new Map<string, Doc<PendingTarget>>(),
    ]);
    const activeRollout = active && pending.size > 0 ? (await this.store.get<Rollout>(ROLLOUTS, active))?.data : undefined;
    const now = new Date().toISOString();
    const rolloutId = Bun.randomUUIDv7();
    const ops: WriteOp[] = [];
    const rendered = new Map<string, RenderedConfig>();
    const changed: string[] = [];
    const failed: RenderFailure[] = [];
    const skipped: SkippedCollector[] = [];
    const commits: string[] = [];
    for (const id of ids) {
      const collector = await this.collectors.get(id).catch((error) => (error instanceof NotFoundError ? null : Promise.reject(error)));
      if (!collector) continue;
      const target = targets.get(id);
      // A rollback pinned it where it is.
      if (target?.data.pinned) continue;
      const queued = pending.get(`${active}/${id}`);
      // Queued in a staged rollout: it stays on the commit it runs until its batch goes out, with the target it will get rendered anew.
      const commit = queued && target ? target.data.targetCommit : currentCommit(target?.data, fleet);
      if (commit === null) continue;
      if (queued && activeRollout !== undefined) {
        const pendingCommit = queued.data.commit ?? activeRollout.commit;
        try {
          const next = (await this.at(pendingCommit)).render(collector);
          if (next.hash !== queued.data.hash) {
            rendered.set(next.hash, next);
            const data: PendingTarget = { ...queued.data, hash: next.hash };
            ops.push({ op: "put", collection: PENDING, id: queued.id, data, expect: queued.version });
          }
        } catch (error) {
          // Its batch releases what was rendered at publish; the failure is recorded by the render at its own commit below, if it fails there too.
          if (!(error instanceof AppError)) throw error;
        }
        // Queued by an attribute rollout: what it waits for is this very change, so it stays where it is until its batch goes out.
        if (activeRollout.kind === "attributes") continue;
      }
      const at = await this.at(commit);
      const known = failures.get(id);
      const cleared: WriteOp[] = known ? [{ op: "delete", collection: RENDER_FAILURES, id, expect: known.version }] : [];
      // Without a target, only a collector the commit's config reaches gets one (publish counts the same ones).
      if (!target && !reaches(at, collector)) {
        ops.push(...cleared);
        continue;
      }
      let config: RenderedConfig;
      try {
        config = at.render(collector);
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        const message = error.details[0]?.message ?? error.message;
        if (known?.data.commit !== commit || known.data.error !== message) {
          const failure: RenderFailure = { collectorId: id, commit, error: message, at: now, rolloutId };
          ops.push({ op: "put", collection: RENDER_FAILURES, id, data: failure, expect: known?.version ?? "absent" });
          failed.push(failure);
          skipped.push({ collectorId: id, name: collector.name, path: error.details[0]?.path ?? null, message });
          commits.push(commit);
        }
        continue;
      }
      ops.push(...cleared);
      if (target?.data.targetHash === config.hash) continue;
      rendered.set(config.hash, config);
      const entry = {
        seq: (target?.data.targetSeq ?? 0) + 1,
        commit,
        hash: config.hash,
        time: now,
        state: "outdated" as const,
        actor: SYSTEM_ACTOR.actor,
        cause: "attributes" as const,
        rolloutId,
      };
      ops.push(...targetWrites(id, entry, target?.version ?? "absent"));
      changed.push(id);
      commits.push(commit);
    }
    if (ops.length === 0) return;
    if (changed.length + skipped.length > 0) {
      const involved = [...changed, ...skipped.map((s) => s.collectorId)].sort();
      const rollout: Rollout = {
        id: rolloutId,
        kind: "attributes",
        commit: commits[0]!,
        actor: SYSTEM_ACTOR.actor,
        startedAt: now,
        scope: collectorsScope(involved),
        collectorIds: involved,
        changed,
        ...(skipped.length > 0 ? { skipped } : {}),
      };
      ops.push({ op: "put", collection: ROLLOUTS, id: rolloutId, data: rollout, expect: "absent" });
    }
    ops.push(...(await unstoredWrites(this.store, [...rendered.values()])));
    await this.store.write(ops, [
      auditEntry(SYSTEM_ACTOR, "config.retarget", "collector", null, {
        ...(changed.length + skipped.length > 0 ? { rollout: rolloutId } : {}),
        collectorIds: changed,
        changed: changed.length,
        failed: failed.map((f) => f.collectorId),
      }),
    ]);
    if (failed.length > 0) {
      this.log.warn(
        { collectorIds: failed.slice(0, 20).map((f) => f.collectorId), count: failed.length, error: failed[0]!.error },
        "retarget: the config of collectors whose attributes changed cannot be rendered; they keep the config they have",
      );
    }
  }

  /** A commit's renderer, kept for the last KEPT_COMMITS commits asked for (a snapshot read and its renders are the cost). */
  at(commit: string): Promise<AtCommit> {
    let entry = this.commits.get(commit);
    if (entry) {
      this.commits.delete(commit);
    } else {
      entry = this.config.snapshotAt(commit).then((snapshot) => ({
        snapshot,
        render: fleetRenderer(snapshot, () => this.collectors.trust.keys()),
        named: new Set([...snapshot.activations.keys(), ...[...snapshot.routes.values()].map((r) => r.collectorId)]),
        withMatchers: matcherPipelines(snapshot.pipelines),
        trusted: () => this.collectors.trust.keys(),
      }));
      entry.catch(() => this.commits.delete(commit));
    }
    this.commits.set(commit, entry);
    return entry;
  }
}
