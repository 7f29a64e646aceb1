/**
 * Publish (with its plan), per-collector targets, history, rollback and pins,
 * delivery, and what collectors report back (docs/architecture.md "The
 * configuration lifecycle" and "Status model"); what is stored is declared in
 * records.ts, staged rollouts and rollout progress live in staged.ts.
 * Publishing renders every affected collector's config at the head commit,
 * content-hashes it, and records a new target only where the hash changed, so
 * an unchanged config is never delivered twice. Targets, history, the rollout
 * and its audit entry are stored by publish-writes.ts: one write, or slices
 * whose every crash point leaves the rollout naming each target written;
 * delivery reads the targets.
 *
 * Secrets: a rendered config holds each secret as its marker (render/secrets.ts),
 * so what is stored, hashed and shown never holds a plaintext. Only the body
 * handed to a collector's channel (`delivered`) has them in, kept in memory.
 * What a collector reports back (its effective config, its errors) may quote
 * them, so it is redacted before it is stored (`redact`).
 */
import { auditEntry, SYSTEM_ACTOR, type Actor } from "../audit/audit.ts";
import type { Collector } from "../../shared/collectors.ts";
import type { ConfigReason } from "../../shared/attention.ts";
import { AVAILABLE_COMPONENTS, lackingComponents, lackingReason, type Build } from "../collectors/builds.ts";
import { COLLECTORS, type Collectors } from "../collectors/collectors.ts";
import type { TrustedKeys } from "../collectors/attributes.ts";
import type { ConfigStore } from "../configstore/configstore.ts";
import { ConflictError, NotFoundError, type ErrorDetail } from "../errors.ts";
import type { Logger } from "pino";
import { deliverable } from "../render/secrets.ts";
import { MissingSecretError, type SecretVault } from "../secrets/vault.ts";
import { plaintextRedactor } from "../render/redact.ts";
import { markedSecrets } from "../secrets/values.ts";
import { Coalescer } from "../store/coalesce.ts";
import type { Store, WriteOp } from "../store/store.ts";
import { fleetRenderer, type RenderedConfig } from "./renderer.ts";
import { renderFleet, skippedOf } from "./fleet-render.ts";
import { matchedPipelineIds, matcherPipelines } from "../collectors/matching.ts";
import type { Snapshot } from "../configstore/layout.ts";
import { compileFilter } from "../../shared/collector-filter.ts";
import type { Matcher } from "../../shared/matchers.ts";
import type { ConfigState, HistoryEntry as HistoryView, PublishPlan, Rollout } from "../../shared/rollouts.ts";
import { cutBatches, stagedFields, type Strategy } from "./strategy.ts";
import {
  ACTIVE,
  activeStagedRollout,
  CONFIGS,
  EFFECTIVE,
  FLEET,
  HISTORY,
  historyId,
  historyState,
  LATEST,
  LATEST_FLEET,
  PENDING,
  RENDER_FAILURES,
  RENDERED,
  ROLLOUTS,
  rolloutState,
  targetWrites,
  type CollectorConfig,
  type ConfigReport,
  type EffectiveConfig,
  type FleetPublish,
  type HistoryEntry,
  type PendingTarget,
  type RenderFailure,
  type TargetDrift,
} from "./records.ts";
import { publishPlan } from "./publish-plan.ts";
import { PublishWrites } from "./publish-writes.ts";
import { configDriftIsolated } from "./drift-isolated.ts";
import { EffectiveIntakeGate, MAX_EFFECTIVE_CONFIG_BYTES, type EffectiveIntake } from "./effective-intake.ts";
import type { Drift } from "./drift.ts";
import { redactTokens } from "../auth/tokens.ts";


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

type TargetListener = (collectorId: string | undefined) => void;

export interface RolloutsOptions {
  /** Store operations per write of a publish cut into slices (publish-writes.ts WRITE_SLICE); tests cut small fleets. */
  writeSlice?: number;
}

/**
 * Rendered configs kept decoded in memory (a change, which only the secrets
 * upgrade makes, drops one), bounded by count: with attribute references
 * nearly every collector has its own, a few KiB each.
 */
const RENDERED_CACHE = 20_000;
/** Times a publish runs when another replica keeps giving its collectors targets meanwhile (jittered, doubling pauses between). */
const PUBLISH_ATTEMPTS = 8;


/** A target's fields with the "could not be delivered" mark dropped: it was delivered, or the collector reports on it. */
function deliveredTarget(target: CollectorConfig): Omit<CollectorConfig, "undelivered"> {
  const { undelivered: _, ...rest } = target;
  return rest;
}


/** One collector's secrets as a redactor, built at a target seq: a new target may name other secrets. */
interface Redaction {
  seq: number;
  redact: (text: string) => string;
}

export class Rollouts {
  /** Known targets; null caches "nothing published yet", which unpublished collectors poll for. */
  private readonly targets = new Map<string, CollectorConfig | null>();
  /** Bumped whenever cached targets are dropped: a read that started before must not fill the cache. */
  private targetsEpoch = 0;
  /** Reads in flight count as cached: a fleet's sessions asking for one new config at once cause one read. */
  private readonly renderedByHash = new Map<string, Promise<RenderedConfig | null>>();
  /** Bodies with their secrets in, per rendered hash: memory only, never stored or logged. */
  private readonly deliveredByHash = new Map<string, Promise<string>>();
  /** Rendered hashes whose failed delivery was logged, so a fleet on one config logs it once. */
  private readonly undeliverableLogged = new Set<string>();
  /** Per collector, built when it first reports something to redact. */
  private readonly redactions = new Map<string, Redaction>();
  private readonly configWrites: Coalescer<CollectorConfig>;
  private readonly historyWrites: Coalescer<HistoryEntry>;
  private readonly unwatch: () => void;
  private readonly targetListeners = new Set<TargetListener>();
  /** The reported keys matchers may read now (collectors/trust.ts). */
  private readonly trusted = (): TrustedKeys => this.collectors.trust.keys();
  private readonly effectiveIntake = new EffectiveIntakeGate();
  /** Collectors whose drift is to be judged again (`scheduleDrift`), one at a time, each once however often asked meanwhile. */
  private readonly driftDue = new Set<string>();
  private drifting: Promise<void> | null = null;
  /** Stores publishes, and records those whose writes stopped part way as interrupted (started with the other services). */
  readonly writes: PublishWrites;

  constructor(
    private readonly store: Store,
    private readonly config: ConfigStore,
    private readonly collectors: Collectors,
    private readonly vault: Pick<SecretVault, "open">,
    private readonly log: Logger,
    options: RolloutsOptions = {},
  ) {
    this.writes = new PublishWrites(store, log, options.writeSlice);
    this.configWrites = new Coalescer(store, CONFIGS, 50, log);
    this.historyWrites = new Coalescer(store, HISTORY, 50, log);
    // Targets change by publish or rollback on any replica; forget cached ones as the feed says, all of them after a resync.
    // Listeners hear of a change only once every cached target it touches is dropped, so what they read is the new one.
    this.unwatch = store.watch(
      (changes) => {
        const changed: string[] = [];
        for (const c of changes) {
          // A deleted collector's secrets are no longer needed here (a new target is told by its seq).
          if (c.collection === COLLECTORS && c.op === "delete") this.redactions.delete(c.id);
          // Rendered configs change only when the secrets upgrade takes plaintext out of one (delivered bytes stay the same).
          if (c.collection === RENDERED) {
            this.renderedByHash.delete(c.id);
            this.redactions.clear();
          }
          if (c.collection !== CONFIGS) continue;
          this.targetsEpoch++;
          this.targets.delete(c.id);
          changed.push(c.id);
        }
        for (const id of changed) for (const listener of this.targetListeners) listener(id);
      },
      () => {
        this.targetsEpoch++;
        this.targets.clear();
        this.renderedByHash.clear();
        this.redactions.clear();
        for (const listener of this.targetListeners) listener(undefined);
      },
    );
  }

  /**
   * Calls `listener` with a collector's id when its target changes (publish,
   * rollback, a delivery or report moving its state, on any replica), and
   * with undefined when any may have (the change feed resynced). Returns the
   * unsubscribe.
   */
  onTargetChanged(listener: TargetListener): () => void {
    this.targetListeners.add(listener);
    return () => this.targetListeners.delete(listener);
  }

  async close(): Promise<void> {
    this.unwatch();
    this.targetListeners.clear();
    this.driftDue.clear();
    await this.drifting;
    await Promise.all([this.configWrites.close(), this.historyWrites.close()]);
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
    const fleet = await renderFleet(fleetRenderer(snapshot, this.trusted), affected, (id) => targets.get(id)?.pinned !== undefined, named);
    const pinned = fleet.pinned.map((c) => c.id);
    const skipped = skippedOf(fleet);
    const renderedOps: WriteOp[] = [];
    /** Collectors with equal configs share one rendered document. */
    const renderedPuts = new Set<string>();
    const next = new Map<string, string>();
    const builds = await this.builds(affected);
    /** Collectors whose build lacks a component their new config uses: they keep what they run, skipped with the reason. */
    const lacking = new Set<string>();
    /** Collectors already on their new config, by the rollout that gave it them: those of an interrupted publish are resumed. */
    const already = new Map<string, string[]>();
    for (const { collector, config } of fleet.rendered) {
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
      const missing = build && config.runtime === "otelcol" ? lackingComponents(config.body, build) : [];
      if (missing.length > 0) {
        lacking.add(collector.id);
        skipped.push({ collectorId: collector.id, name: collector.name, path: "components", message: lackingReason(missing) });
        continue;
      }
      if (!renderedPuts.has(config.hash)) {
        renderedPuts.add(config.hash);
        renderedOps.push({ op: "put", collection: RENDERED, id: config.hash, data: config });
      }
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
      ...this.rolloutOps(rollout),
      ...resumes.map(({ rollout: r, version }): WriteOp => ({ op: "put", collection: ROLLOUTS, id: r.id, data: { ...r, resumedBy: rollout.id }, expect: version })),
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
      rendered: renderedOps,
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
    const fleet = await renderFleet(fleetRenderer(snapshot, this.trusted), affected, (id) => targets.get(id)?.pinned !== undefined, new Set(scope.collectorIds));
    return publishPlan({ commit, fleet, targets, rendered: (hash) => this.storedRendered(hash), builds: await this.builds(affected) });
  }

  /** The builds the collectors reported (collectors/builds.ts), by collector id; those that reported none are absent. */
  private async builds(collectors: readonly Collector[]): Promise<Map<string, Build>> {
    const docs = await this.store.getMany<Build>(AVAILABLE_COMPONENTS, collectors.filter((c) => c.managementMode === "opamp").map((c) => c.id));
    return new Map([...docs].map(([id, doc]) => [id, doc.data]));
  }

  private async allTargets(): Promise<Map<string, CollectorConfig>> {
    return new Map((await this.store.list<CollectorConfig>(CONFIGS)).map((d) => [d.id, d.data]));
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
    const keep = scope.match === undefined ? () => true : compileFilter({ match: scope.match, trusted });
    return collectors.filter(
      (c) => keep(c) && (inConfig.has(c.id) || targets.has(c.id) || matchedPipelineIds(c, withMatchers, trusted).length > 0),
    );
  }

  private rolloutOps(rollout: Rollout): WriteOp[] {
    return [
      { op: "put", collection: ROLLOUTS, id: rollout.id, data: rollout, expect: "absent" },
      { op: "put", collection: LATEST.collection, id: LATEST.id, data: { rolloutId: rollout.id } },
      ...(rollout.kind === "publish" && rollout.scope === "fleet"
        ? [{ op: "put" as const, collection: LATEST_FLEET.collection, id: LATEST_FLEET.id, data: { rolloutId: rollout.id } }]
        : []),
    ];
  }

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
    const rendered = await this.storedRendered(previous.hash);
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
      [...targetWrites(collectorId, entry, undefined, { at: now, actor: who.actor }), ...(within ? [] : this.rolloutOps(rollout))],
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
    await this.store.write([{ op: "put", collection: CONFIGS, id: collectorId, data: rest, expect: doc.version }], [
      auditEntry(who, "config.unpin", "collector", collectorId, { seq: rest.targetSeq }),
    ]);
  }

  /**
   * Offers a target the collector rolled back from again (it is not offered
   * on its own, so a config that fails is not re-sent in a loop).
   */
  async retry(who: Actor, collectorId: string): Promise<void> {
    await this.collectors.get(collectorId);
    const doc = await this.store.get<CollectorConfig>(CONFIGS, collectorId);
    if (!doc?.data.collectorRollback) throw new ConflictError("The collector did not roll back from its target; there is nothing to retry.", "nothing_to_retry");
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

  /**
   * A rendered config by its hash (history entries name it) as the store
   * holds it now, not from the delivery cache: the secrets upgrade
   * (secrets-upgrade.ts) may since have replaced a plaintext in it by its
   * marker, and what is shown must be the redacted body.
   */
  async storedRendered(hash: string): Promise<RenderedConfig | null> {
    return (await this.store.get<RenderedConfig>(RENDERED, hash))?.data ?? null;
  }

  /**
   * The rendered config a collector should run, or null when nothing was
   * published to it. Served from memory after the first read: every remote
   * config poll asks.
   */
  async target(collectorId: string): Promise<{ target: CollectorConfig; rendered: RenderedConfig } | null> {
    const target = await this.targetDoc(collectorId);
    if (target === null) return null;
    const rendered = await this.rendered(target.targetHash);
    return rendered ? { target, rendered } : null;
  }

  /**
   * Where the collector's target stands, without its rendered bytes: a poll
   * from a collector that already runs it needs no more (from memory).
   */
  targetOf(collectorId: string): Promise<CollectorConfig | null> {
    return this.targetDoc(collectorId);
  }

  private async targetDoc(collectorId: string): Promise<CollectorConfig | null> {
    let target = this.targets.get(collectorId);
    if (target === undefined) {
      const epoch = this.targetsEpoch;
      target = (await this.store.get<CollectorConfig>(CONFIGS, collectorId))?.data ?? null;
      if (epoch === this.targetsEpoch) this.targets.set(collectorId, target);
    }
    return target;
  }

  private rendered(hash: string): Promise<RenderedConfig | null> {
    let rendered = this.renderedByHash.get(hash);
    if (!rendered) {
      const read = this.store.get<RenderedConfig>(RENDERED, hash).then((doc) => doc?.data ?? null);
      rendered = read;
      if (this.renderedByHash.size >= RENDERED_CACHE) this.renderedByHash.delete(this.renderedByHash.keys().next().value!);
      this.renderedByHash.set(hash, read);
      // Nothing stored (yet) or a failed read is not kept: the next ask reads again.
      const forget = () => void (this.renderedByHash.get(hash) === read && this.renderedByHash.delete(hash));
      read.then((found) => found === null && forget(), forget);
    }
    return rendered;
  }

  /**
   * The body to send the collector: `rendered` with its secrets in, opened
   * from the vault, kept in memory per hash (never stored, never logged).
   * Null when a secret it names cannot be opened here: nothing may be sent,
   * so the target turns failed and `undelivered` with the reason (ids, no
   * values), the first failure per config is logged, and the next contact
   * tries again.
   */
  async delivered(collectorId: string, rendered: RenderedConfig): Promise<string | null> {
    const { hash } = rendered;
    let body = this.deliveredByHash.get(hash);
    if (!body) {
      body = deliverable(rendered.runtime, rendered.body, (id) => this.vault.open(id));
      if (this.deliveredByHash.size >= RENDERED_CACHE) this.deliveredByHash.delete(this.deliveredByHash.keys().next().value!);
      this.deliveredByHash.set(hash, body);
    }
    try {
      const text = await body;
      this.undeliverableLogged.delete(hash);
      return text;
    } catch (error) {
      if (this.deliveredByHash.get(hash) === body) this.deliveredByHash.delete(hash);
      if (!(error instanceof MissingSecretError)) throw error;
      if (!this.undeliverableLogged.has(hash)) {
        this.undeliverableLogged.add(hash);
        this.log.error(
          { collectorId, hash, secretId: error.id, err: error },
          "rollout: a config names a secret this server cannot open, so it is not delivered (the collector keeps the config it runs); check that every replica has the same secrets key",
        );
      }
      const message = `Not delivered: ${error.message}. The collector keeps the config it runs; delivery is tried again at its next contact.`;
      this.configWrites
        .update(collectorId, (current) =>
          current && current.targetHash === hash && !(current.undelivered && current.error === message)
            ? { ...current, state: "failed", error: message, undelivered: true, updatedAt: new Date().toISOString() }
            : null,
        )
        .catch((err) => this.log.warn({ err, collectorId }, "rollout: recording an undelivered config failed"));
      return null;
    }
  }

  /**
   * `text` with every secret this collector may have been delivered (those
   * named by any config pushed to it) replaced by its marker, however the
   * text spells it (see render/redact.ts), and any svc token cut short. Markers already there stay, so
   * redacting twice changes nothing. A secret this server cannot open is
   * left out: it cannot have been delivered from here.
   */
  async redact(collectorId: string, text: string): Promise<string> {
    return redactTokens((await this.redaction(collectorId)).redact(text));
  }

  private async redaction(collectorId: string): Promise<Redaction> {
    // Read before the history, so the history listed holds every entry up to it.
    const seq = (await this.targetDoc(collectorId))?.targetSeq ?? 0;
    const known = this.redactions.get(collectorId);
    if (known?.seq === seq) return known;
    const ids = new Set<string>();
    const hashes = new Set((await this.store.list<HistoryEntry>(HISTORY, { prefix: `${collectorId}/` })).map((d) => d.data.hash));
    for (const hash of hashes) for (const id of markedSecrets((await this.rendered(hash))?.body ?? "")) ids.add(id);
    const sealed: [string, string][] = [];
    for (const id of ids) {
      try {
        sealed.push([await this.vault.open(id), id]);
      } catch (error) {
        if (!(error instanceof MissingSecretError)) throw error;
      }
    }
    const redaction: Redaction = { seq, redact: plaintextRedactor(sealed) };
    this.redactions.set(collectorId, redaction);
    return redaction;
  }

  /**
   * Moves the collector's config state by what it reports. Reports about a
   * config other than its current target are stale and change nothing, but
   * one: a collector that applied a config it ran before while its target
   * was applying or had failed went back on its own (the OpAMP supervisor's
   * last-known-good), see `collectorRolledBack`.
   */
  async report(collectorId: string, report: ConfigReport): Promise<void> {
    if (report.state === "applied" && (await this.collectorRolledBack(collectorId, report.hash))) return;
    const state: ConfigState = report.state === "applied" ? "current" : report.state;
    // A collector's message may quote its config, secrets too.
    const error = report.state === "failed" ? (report.error ? await this.redact(collectorId, report.error) : "the collector could not apply the config") : null;
    const now = new Date().toISOString();
    let seq: number | null = null;
    await this.configWrites.update(collectorId, (current) => {
      if (!current || current.targetHash !== report.hash) return null;
      seq = current.targetSeq;
      if (current.state === state && current.error === error && !current.undelivered) return null;
      return { ...deliveredTarget(current), state, error, updatedAt: now };
    });
    if (seq !== null && state === "current") this.scheduleDrift(collectorId);
    if (seq !== null) {
      await this.historyWrites.update(historyId(collectorId, seq), (entry) => {
        if (!entry || entry.hash !== report.hash || (entry.state === state && (entry.error ?? null) === error)) return null;
        const { error: _, ...rest } = entry;
        return error === null ? { ...rest, state } : { ...rest, state, error };
      });
    }
  }

  /**
   * The collector says it applied `hash`, an earlier config of its own, while
   * its target was applying or had failed: it rolled back by itself. The
   * target turns failed, says so, and is not offered again (until a new
   * target or an explicit retry), so a config that fails is not re-sent in a
   * loop; its history entry reads "rolled back by the collector". Answers
   * whether that is what happened.
   */
  private async collectorRolledBack(collectorId: string, hash: string): Promise<boolean> {
    const target = await this.targetDoc(collectorId);
    if (!target || target.targetHash === hash) return false;
    if (target.collectorRollback?.toHash === hash) return true;
    const history = (await this.store.list<HistoryEntry>(HISTORY, { prefix: `${collectorId}/` })).map((d) => d.data);
    const earlier = [...history].reverse().find((entry) => entry.seq < target.targetSeq && entry.hash === hash);
    if (!earlier) return false;
    const now = new Date().toISOString();
    let reason: string | null = null;
    let moved = false;
    let already = false;
    // Decided on the latest state, writes still being coalesced included: an outdated target was not
    // received yet, so an older config reported then is only a stale report.
    await this.configWrites.update(collectorId, (current) => {
      if (!current || current.targetSeq !== target.targetSeq) return null;
      already = current.collectorRollback !== undefined;
      if (already || (current.state !== "applying" && current.state !== "failed")) return null;
      moved = true;
      reason = current.state === "failed" ? current.error : null;
      const error = `The collector rolled back to the config of #${earlier.seq} after this one failed${reason ? `: ${reason}` : ""}.`;
      return { ...deliveredTarget(current), state: "failed", error, collectorRollback: { toSeq: earlier.seq, toHash: hash, at: now }, updatedAt: now };
    });
    if (!moved) return already;
    await this.historyWrites.update(historyId(collectorId, target.targetSeq), (entry) =>
      entry ? { ...entry, state: "failed", ...(reason ? { error: reason } : {}), collectorRolledBackTo: earlier.seq } : null,
    );
    await this.store.write([], [auditEntry(SYSTEM_ACTOR, "config.collector_rollback", "collector", collectorId, { fromSeq: target.targetSeq, toSeq: earlier.seq })]);
    return true;
  }

  /** A collector was sent its target: outdated (or undelivered until now) becomes applying until it reports. */
  async fetched(collectorId: string, hash: string): Promise<void> {
    await this.configWrites.update(collectorId, (current) => {
      if (!current || current.targetHash !== hash) return null;
      if (current.undelivered) return { ...deliveredTarget(current), state: "applying", error: null, updatedAt: new Date().toISOString() };
      return current.state === "outdated" ? { ...current, state: "applying", updatedAt: new Date().toISOString() } : null;
    });
  }

  /**
   * Stores the config the collector says it runs (shown beside the target),
   * redacted: it holds what was delivered; its drift is judged afterwards
   * (`scheduleDrift`). Which reports are looked at is effective-intake.ts's:
   * one equal to the last kept is "unchanged"; a changed one past the
   * collector's rate is "limited" (not read; the channel asks for it again
   * later, and drift waits for it); one over MAX_EFFECTIVE_CONFIG_BYTES is
   * "refused": the last one kept stays, with the refusal and its reason
   * beside it, so a collector cannot grow the state by reporting.
   */
  async setEffective(collectorId: string, files: EffectiveConfig["files"]): Promise<EffectiveIntake> {
    const admission = this.effectiveIntake.admit(collectorId, files, () => this.scheduleDrift(collectorId));
    if (admission.kind === "unchanged" || admission.kind === "limited") return admission.kind;
    const now = new Date().toISOString();
    if (admission.kind === "refused") {
      const kept = (await this.store.get<EffectiveConfig>(EFFECTIVE, collectorId))?.data;
      const reason = `The collector reported an effective config of ${admission.bytes} bytes, more than the ${MAX_EFFECTIVE_CONFIG_BYTES} svc keeps; it was not kept.`;
      const data: EffectiveConfig = { collectorId, files: kept?.files ?? [], reportedAt: kept?.reportedAt ?? now, refused: { at: now, reason } };
      await this.store.write([{ op: "put", collection: EFFECTIVE, id: collectorId, data }]);
      this.log.warn({ collectorId, bytes: admission.bytes }, "an effective config report was refused: too large");
      this.scheduleDrift(collectorId);
      return "refused";
    }
    const redacted = await Promise.all(files.map(async (file) => ({ ...file, body: await this.redact(collectorId, file.body) })));
    const data: EffectiveConfig = { collectorId, files: redacted, reportedAt: now };
    await this.store.write([{ op: "put", collection: EFFECTIVE, id: collectorId, data }]);
    this.effectiveIntake.stored(collectorId, admission.digest);
    this.scheduleDrift(collectorId);
    return "stored";
  }

  /** Whether the collector's next effective-config report would be looked at: a channel that skipped one asks for it again then. */
  effectiveWelcome(collectorId: string): boolean {
    return this.effectiveIntake.welcome(collectorId);
  }

  /**
   * Judges the collector's drift again, soon: asked when it reports an
   * effective config and when its target turns current (the two may come in
   * either order). Judged one collector at a time, in a worker
   * (drift-isolated.ts), so reports never hold the event loop, and a
   * collector asked for several times meanwhile is judged once, on what is
   * stored then.
   */
  private scheduleDrift(collectorId: string): void {
    this.driftDue.add(collectorId);
    this.drifting ??= this.judgeDue();
  }

  private async judgeDue(): Promise<void> {
    try {
      // A Set visits what is added while it is walked.
      for (const collectorId of this.driftDue) {
        this.driftDue.delete(collectorId);
        await this.checkDrift(collectorId).catch((error: unknown) => this.log.error({ err: error, collectorId }, "the drift check failed"));
      }
    } finally {
      this.drifting = null;
    }
  }

  /** Compares what the collector says it runs with its target (drift.ts) and keeps the answer on the target when it changed. */
  private async checkDrift(collectorId: string): Promise<void> {
    const current = await this.target(collectorId);
    if (!current) return;
    const effective = (await this.store.get<EffectiveConfig>(EFFECTIVE, collectorId))?.data;
    if (!effective) return;
    const unknown = this.unknownDrift(collectorId, effective);
    // Reported before this target was recorded, it cannot be what the collector runs of it: its next report says.
    if (!unknown && current.target.targetAt !== undefined && effective.reportedAt < current.target.targetAt) return;
    const { targetHash } = current.target;
    const result = unknown ?? (await configDriftIsolated(current.rendered.runtime, current.rendered.body, effective.files));
    const drift: TargetDrift = { ...result, targetHash, checkedAt: new Date().toISOString() };
    await this.configWrites.update(collectorId, (target) => {
      if (!target || target.targetHash !== targetHash) return null;
      const known = target.drift;
      if (known && known.drifted === drift.drifted && known.diff === drift.diff && known.reason === drift.reason) return null;
      return { ...target, drift };
    });
  }

  /** Why the kept effective config cannot tell drift: the collector reported a newer one that was not read or not kept. */
  private unknownDrift(collectorId: string, effective: EffectiveConfig): Drift | null {
    if (this.effectiveIntake.pending(collectorId)) {
      return { drifted: false, diff: null, reason: "the collector reported a newer effective config, not read yet (over its report rate); drift is judged when it is" };
    }
    if (effective.refused && effective.refused.at >= effective.reportedAt) {
      return { drifted: false, diff: null, reason: "the collector's last effective config was too large to keep; drift is not known" };
    }
    return null;
  }

  /** The collectors that run something other than their applied target, in id order: online, current, drifted. */
  async drifted(): Promise<{ collectorId: string; name: string; reason: string | null; checkedAt: string }[]> {
    return (await this.attention()).drifted;
  }

  /**
   * The collectors an operator should look at, each list in id order: their
   * config failed, a rollback pinned them, they drifted (as `drifted`), or
   * their config cannot be rendered (a publish or an attribute change skipped
   * them). One read of the targets and one of the render failures.
   */
  async attention(): Promise<{
    failed: { collectorId: string; name: string; error: string | null }[];
    pinned: { collectorId: string; name: string; at: string; actor: string }[];
    drifted: { collectorId: string; name: string; reason: string | null; checkedAt: string }[];
    unrenderable: { collectorId: string; name: string; error: string }[];
  }> {
    const out: Awaited<ReturnType<Rollouts["attention"]>> = { failed: [], pinned: [], drifted: [], unrenderable: [] };
    const [targets, failures] = await Promise.all([this.store.list<CollectorConfig>(CONFIGS), this.store.list<RenderFailure>(RENDER_FAILURES)]);
    for (const { data } of targets) {
      if (data.state !== "failed" && !data.pinned && !(data.state === "current" && data.drift?.drifted === true)) continue;
      const collector = await this.collectors.get(data.collectorId).catch(() => null);
      if (!collector) continue;
      const { collectorId } = data;
      const reasons = targetReasons(collector, data);
      if (reasons.includes("failed")) out.failed.push({ collectorId, name: collector.name, error: data.error });
      if (reasons.includes("pinned")) out.pinned.push({ collectorId, name: collector.name, ...data.pinned! });
      if (reasons.includes("drifted")) out.drifted.push({ collectorId, name: collector.name, reason: data.drift!.reason ?? null, checkedAt: data.drift!.checkedAt });
    }
    for (const { data } of failures) {
      const collector = await this.collectors.get(data.collectorId).catch(() => null);
      if (collector) out.unrenderable.push({ collectorId: data.collectorId, name: collector.name, error: data.error });
    }
    return out;
  }

  /**
   * Why each of these collectors needs attention for its config (one page of
   * the collector list): judged as `attention` judges the fleet, from two
   * batched reads, so a row and the counts agree.
   */
  async configAttention(collectors: readonly Collector[]): Promise<Map<string, ConfigReason[]>> {
    const ids = collectors.map((c) => c.id);
    const [targets, failures] = await Promise.all([this.store.getMany<CollectorConfig>(CONFIGS, ids), this.store.getMany<RenderFailure>(RENDER_FAILURES, ids)]);
    const out = new Map<string, ConfigReason[]>();
    for (const collector of collectors) {
      const target = targets.get(collector.id)?.data;
      const reasons = target ? targetReasons(collector, target) : [];
      if (failures.has(collector.id)) reasons.push("unrenderable");
      out.set(collector.id, reasons);
    }
    return out;
  }

  /** The ids of the collectors `attention` lists under one reason. */
  async attentionIds(reason: ConfigReason): Promise<Set<string>> {
    return new Set((await this.attention())[reason].map((c) => c.collectorId));
  }

  async effective(collectorId: string): Promise<EffectiveConfig | null> {
    await this.collectors.get(collectorId);
    return (await this.store.get<EffectiveConfig>(EFFECTIVE, collectorId))?.data ?? null;
  }
}

/** Why a collector's target needs a look: it failed, a rollback pinned it, or it drifted while online and current. */
function targetReasons(collector: Collector, target: CollectorConfig): ConfigReason[] {
  const out: ConfigReason[] = [];
  if (target.state === "failed") out.push("failed");
  if (target.pinned) out.push("pinned");
  if (target.state === "current" && target.drift?.drifted === true && rolloutState(collector, target) === "current") out.push("drifted");
  return out;
}
