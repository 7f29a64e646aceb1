/**
 * Publish, with its plan: renders every affected collector's config at the
 * head commit, content-hashes it, and records a new target only where the
 * hash changed, so an unchanged config is never delivered twice
 * (docs/architecture.md "The configuration lifecycle"). What is stored is
 * declared in records.ts; targets, history, the rollout and its audit entry
 * are stored by publish-writes.ts: one write, or slices whose every crash
 * point leaves the rollout naming each target written. Staged rollouts and
 * rollout progress live in staged.ts, a collector's history, rollback and
 * pins in history.ts, what needs attention in attention.ts; the channels
 * read the targets through delivery.ts's interface (target-delivery.ts).
 */
import type { Actor } from "../audit/audit.ts";
import type { Collector } from "../../shared/collectors.ts";
import { AVAILABLE_COMPONENTS, lackingChecker, lackingReason, type Build } from "../collectors/builds.ts";
import type { Collectors } from "../collectors/collectors.ts";
import type { TrustedKeys } from "../collectors/attributes.ts";
import type { ConfigStore } from "../configstore/configstore.ts";
import { ConflictError, type ErrorDetail } from "../errors.ts";
import type { Logger } from "pino";
import { SCAN_SLICE_MS, Slices } from "../lib/next-turn.ts";
import { readMany, scan } from "../store/scan.ts";
import type { Store, WriteOp } from "../store/store.ts";
import { renderFleetAt, skippedOf } from "./fleet-render.ts";
import { matchedPipelineIds, matcherPipelines } from "../collectors/matching.ts";
import type { Snapshot } from "../configstore/layout.ts";
import type { Matcher } from "../../shared/matchers.ts";
import type { PublishPlan, Rollout } from "../../shared/rollouts.ts";
import { cutBatches, stagedFields, type Strategy } from "./strategy.ts";
import {
  ACTIVE,
  activeStagedRollout,
  CONFIGS,
  FLEET,
  PENDING,
  RENDER_FAILURES,
  ROLLOUTS,
  rolloutOps,
  targetWrites,
  type CollectorConfig,
  type FleetPublish,
  type HistoryEntry,
  type PendingTarget,
  type RenderFailure,
} from "./records.ts";
import { renderedWrites, storedRendered } from "./stored-rendered.ts";
import { componentsKey, type RenderedConfig } from "./renderer.ts";
import { publishPlan } from "./publish-plan.ts";
import { PublishWrites } from "./publish-writes.ts";

/** What a publish covers and how it rolls out. */
export interface PublishOptions extends PublishScope {
  /**
   * With collectorIds: publish to the named collectors whose config renders
   * and leave the others as they are. A publish that names none (the fleet,
   * or matchers) always does so.
   */
  skipErrors?: boolean;
  /** Release the changed collectors batch by batch (strategy.ts); absent: all at once. */
  strategy?: Strategy;
  /** Collectors of the canary batch, resolved by the edge from ids or matchers. */
  canary?: (collector: Collector) => boolean;
}

/** Which collectors a publish or its plan covers: the named ones, or the fleet's affected collectors the matchers select. */
export interface PublishScope {
  collectorIds?: readonly string[];
  match?: readonly Matcher[];
}

export interface RolloutsOptions {
  /** Store operations per write of a publish cut into slices (publish-writes.ts WRITE_SLICE); tests cut small fleets. */
  writeSlice?: number;
}

/** Times a publish runs when another replica keeps giving its collectors targets meanwhile (jittered, doubling pauses between). */
const PUBLISH_ATTEMPTS = 8;

export class Rollouts {
  /** The reported keys matchers may read now (collectors/trust.ts). */
  private readonly trusted = (): TrustedKeys => this.collectors.trust.keys();
  /** Stores publishes, and records those whose writes stopped part way as interrupted (started with the other services). */
  readonly writes: PublishWrites;

  constructor(
    private readonly store: Store,
    private readonly config: ConfigStore,
    private readonly collectors: Collectors,
    log: Logger,
    options: RolloutsOptions = {},
  ) {
    this.writes = new PublishWrites(store, log, options.writeSlice);
  }

  /**
   * Publishes the head commit to the fleet's affected collectors (or those of
   * the scope): renders each, and gives a new target to every one whose
   * config changes, all at once or, with a strategy, batch by batch
   * (`advance` releases the later ones). A collector whose config cannot be
   * rendered keeps what it runs and is listed in the rollout's `skipped` with
   * the reason (and kept as its RenderFailure, shown on its page): one
   * collector's bad attribute never holds back the fleet. A publish that
   * names collectors (collectorIds) is refused instead, unless `skipErrors`:
   * the caller asked for those very collectors, and answering 202 while the
   * one they named gets nothing would hide it. Refused while a staged
   * rollout is running or paused. An interrupted publish is recorded first
   * (publish-writes.ts); a collector it left on the config this one renders
   * is counted as this one's change (`resumes`), so no publish under-counts.
   */
  async publish(who: Actor, options: PublishOptions = {}): Promise<Rollout> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.publishOnce(who, options);
      } catch (error) {
        // A target written meanwhile (another replica's retarget of a collector just created, a rollback): publish again from what won.
        if (!(error instanceof ConflictError && error.code === "version_conflict") || attempt >= PUBLISH_ATTEMPTS) throw error;
        await Bun.sleep(Math.random() * 10 * 2 ** attempt);
      }
    }
  }

  private async publishOnce(who: Actor, options: PublishOptions): Promise<Rollout> {
    await this.writes.recover();
    const commit = await this.config.head();
    if (commit === null) throw new ConflictError("Nothing has been committed yet; commit the pending changes first.", "no_commit");
    const active = await activeStagedRollout(this.store);
    if (active) {
      throw new ConflictError(
        `Rollout ${active.data.id} is ${active.data.phase} with batches left to release; resume or abort it before publishing again.`,
        "rollout_in_progress",
      );
    }
    const snapshot = await this.config.snapshotAt(commit);
    const targets = await this.allTargets();
    const renderFailures = (await this.store.list<RenderFailure>(RENDER_FAILURES)).map((d) => d.id);
    const affected = await this.affected(snapshot, targets, options);

    const now = new Date().toISOString();
    const named = new Set(options.collectorIds ?? []);
    const fleet = await renderFleetAt(snapshot, this.trusted, affected, (id) => targets.get(id)?.pinned !== undefined, named);
    const pinned = fleet.pinned.map((c) => c.id);
    const skipped = skippedOf(fleet);
    /** Collectors with equal configs share one rendered document. */
    const renderedPuts = new Map<string, RenderedConfig>();
    const next = new Map<string, string>();
    const builds = await this.builds(affected);
    const lacks = lackingChecker();
    /** Collectors whose build lacks a component their new config uses: they keep what they run, skipped with the reason. */
    const lacking = new Set<string>();
    /** Collectors already on their new config, by the rollout that gave it them: those of an interrupted publish are resumed. */
    const already = new Map<string, string[]>();
    // Planning 100,000 targets held the loop for a quarter of a second (BENCHMARKS.md, issue 36 third pass): in slices.
    const slices = new Slices(SCAN_SLICE_MS);
    for (const { collector, config } of fleet.rendered) {
      if (slices.due) await slices.turn();
      const target = targets.get(collector.id);
      if (target?.targetHash === config.hash) {
        if (target.rolloutId !== undefined) {
          const ids = already.get(target.rolloutId);
          if (ids) ids.push(collector.id);
          else already.set(target.rolloutId, [collector.id]);
        }
        continue;
      }
      const build = builds.get(collector.id);
      const missing = build && config.runtime === "otelcol" ? lacks(componentsKey(config), config.body, build) : [];
      if (missing.length > 0) {
        lacking.add(collector.id);
        skipped.push({ collectorId: collector.id, name: collector.name, path: "components", message: lackingReason(missing) });
        continue;
      }
      renderedPuts.set(config.hash, config);
      next.set(collector.id, config.hash);
    }
    // A named collector that cannot be rendered refuses the publish; one whose build lacks a component is only skipped (its plan says so).
    const unrenderable = skipped.filter((s) => !lacking.has(s.collectorId));
    if (unrenderable.length > 0 && options.collectorIds !== undefined && !options.skipErrors) {
      const details: ErrorDetail[] = unrenderable.map((f) => ({ path: `collectors/${f.collectorId}`, message: `${f.name}: ${f.message}` }));
      throw new ConflictError(
        `The configuration of ${details.length} named collector(s) cannot be rendered: ${details[0]!.message}. Fix it, or publish with skipErrors to leave them as they are.`,
        "render_failed",
        details,
      );
    }
    const resumes = await this.resumable(already);
    const resumed = resumes.flatMap((r) => r.collectorIds);
    const { strategy } = options;
    const canary = options.canary ? new Set(affected.filter(options.canary).map((c) => c.id)) : undefined;
    const batches = strategy ? cutBatches([...next.keys()], strategy, canary) : [[...next.keys()]];
    // Resumed collectors have their target: they lead the first batch, released with it.
    batches[0] = [...resumed, ...(batches[0] ?? [])];
    const changed = batches.flat();
    const rollout: Rollout = {
      id: Bun.randomUUIDv7(),
      kind: "publish",
      commit,
      actor: who.actor,
      startedAt: now,
      scope: options.collectorIds?.length === 1 ? options.collectorIds[0]! : "fleet",
      collectorIds: affected.map((c) => c.id),
      changed,
      ...(skipped.length > 0 ? { skipped } : {}),
      ...(pinned.length > 0 ? { pinned } : {}),
      ...stagedFields(strategy, batches),
      ...(resumes.length > 0 ? { resumes: resumes.map((r) => ({ rolloutId: r.rollout.id, collectors: r.collectorIds.length })) } : {}),
    };
    const perCollector: WriteOp[][] = [];
    for (const [index, batch] of batches.entries()) {
      for (const id of index === 0 ? batch.slice(resumed.length) : batch) {
        if (slices.due) await slices.turn();
        const hash = next.get(id)!;
        const entry: HistoryEntry = {
          seq: (targets.get(id)?.targetSeq ?? 0) + 1,
          commit,
          hash,
          time: now,
          state: "outdated",
          actor: who.actor,
          cause: "publish",
          rolloutId: rollout.id,
        };
        if (index === 0) perCollector.push(targetWrites(id, entry));
        else perCollector.push([{ op: "put", collection: PENDING, id: `${rollout.id}/${id}`, data: { hash } satisfies PendingTarget, expect: "absent" }]);
      }
    }
    // A collector rendered: what an earlier render could not do is moot. One skipped keeps why, shown on its page.
    const rendered = new Set(fleet.rendered.map((r) => r.collector.id).filter((id) => !lacking.has(id)));
    const last: WriteOp[] = renderFailures.filter((id) => rendered.has(id)).map((id) => ({ op: "delete", collection: RENDER_FAILURES, id }));
    for (const { collectorId, message } of skipped) {
      const failure: RenderFailure = { collectorId, commit, error: message, at: now, rolloutId: rollout.id };
      last.push({ op: "put", collection: RENDER_FAILURES, id: collectorId, data: failure });
    }
    if (rollout.phase) last.push({ op: "put", collection: ACTIVE.collection, id: ACTIVE.id, data: { rolloutId: rollout.id } });
    if (options.collectorIds === undefined && options.match === undefined) {
      last.push({ op: "put", collection: FLEET.collection, id: FLEET.id, data: { commit, at: now } satisfies FleetPublish });
    }
    // Each resumed publish names this one, guarded: two publishes never both take its collectors over.
    const first = [
      ...rolloutOps(rollout),
      ...resumes.map(
        ({ rollout: r, version }): WriteOp => ({ op: "put", collection: ROLLOUTS, id: r.id, data: { ...r, resumedBy: rollout.id }, expect: version }),
      ),
    ];
    await this.writes.write({
      rollout,
      who,
      details: {
        commit,
        scope: rollout.scope,
        collectors: affected.length,
        changed: changed.length,
        ...(rollout.resumes ? { resumes: rollout.resumes } : {}),
        ...(rollout.skipped ? { skipped: rollout.skipped.length } : {}),
        ...(rollout.pinned ? { pinned: rollout.pinned.length } : {}),
        ...(rollout.strategy ? { strategy: rollout.strategy, batches: batches.length } : {}),
      },
      rendered: await renderedWrites(this.store, renderedPuts.values()),
      first,
      resumed: resumed.length,
      perCollector,
      last,
    });
    return rollout;
  }

  /**
   * Of the collectors already on the config a publish renders, by the rollout
   * that gave it them, those an interrupted publish moved that no later
   * publish resumed yet: this publish counts them as its own change.
   */
  private async resumable(already: ReadonlyMap<string, string[]>): Promise<{ rollout: Rollout; version: number; collectorIds: string[] }[]> {
    if (already.size === 0) return [];
    const docs = await this.store.getMany<Rollout>(ROLLOUTS, [...already.keys()]);
    return [...docs.values()]
      .filter((doc) => doc.data.interrupted !== undefined && doc.data.resumedBy === undefined)
      .map((doc) => ({ rollout: doc.data, version: doc.version, collectorIds: already.get(doc.id)! }));
  }

  /**
   * What a publish of the head commit would change, without changing
   * anything (publish-plan.ts): the fleet's affected collectors, or those of
   * `scope`.
   */
  async plan(scope: PublishScope = {}): Promise<PublishPlan> {
    const commit = await this.config.head();
    if (commit === null) throw new ConflictError("Nothing has been committed yet; commit the pending changes first.", "no_commit");
    const snapshot = await this.config.snapshotAt(commit);
    const targets = await this.allTargets();
    const affected = await this.affected(snapshot, targets, scope);
    const fleet = await renderFleetAt(snapshot, this.trusted, affected, (id) => targets.get(id)?.pinned !== undefined, new Set(scope.collectorIds));
    return publishPlan({ commit, fleet, targets, rendered: (hash) => storedRendered(this.store, hash), builds: await this.builds(affected) });
  }

  /** The builds the collectors reported (collectors/builds.ts), by collector id; those that reported none are absent. */
  private async builds(collectors: readonly Collector[]): Promise<Map<string, Build>> {
    const docs = await readMany<Build>(
      this.store,
      AVAILABLE_COMPONENTS,
      collectors.filter((c) => c.managementMode === "opamp").map((c) => c.id),
    );
    return new Map([...docs].map(([id, doc]) => [id, doc.data]));
  }

  /** Every target, read in pages (store/scan.ts): a publish meets any written meanwhile in its history entry's guard. */
  private async allTargets(): Promise<Map<string, CollectorConfig>> {
    const targets = new Map<string, CollectorConfig>();
    for await (const doc of scan<CollectorConfig>(this.store, CONFIGS)) targets.set(doc.id, doc.data);
    return targets;
  }

  /**
   * The collectors a publish renders, in id order: the named ones (each must
   * exist), else every collector the snapshot's records name, that has a
   * target, or that some pipeline's matchers select, narrowed by `match`.
   */
  private async affected(snapshot: Snapshot, targets: ReadonlyMap<string, CollectorConfig>, scope: PublishScope): Promise<Collector[]> {
    if (scope.collectorIds !== undefined) {
      const ids = [...new Set(scope.collectorIds)].sort();
      return Promise.all(ids.map((id) => this.collectors.get(id)));
    }
    const inConfig = new Set([...snapshot.activations.keys(), ...[...snapshot.routes.values()].map((r) => r.collectorId)]);
    // A collector some pipeline's matchers select is in the config without a record naming it.
    const withMatchers = matcherPipelines(snapshot.pipelines);
    const collectors = await this.collectors.allAcknowledged();
    const trusted = this.trusted();
    const keep = scope.match === undefined ? () => true : await this.collectors.selects(scope.match);
    // Matching every collector of a fleet takes a while: in slices.
    const affected: Collector[] = [];
    const slices = new Slices(SCAN_SLICE_MS);
    for (const c of collectors) {
      if (keep(c) && (inConfig.has(c.id) || targets.has(c.id) || matchedPipelineIds(c, withMatchers, trusted).length > 0)) affected.push(c);
      if (slices.due) await slices.turn();
    }
    return affected;
  }
}
