/**
 * Publish, rollout status, per-collector history and rollback (docs/architecture.md "The configuration lifecycle" and "Status model").
 * Publishing renders every affected collector's config at the head commit,
 * content-hashes it, and records a new target only where the hash changed, so
 * an unchanged config is never delivered twice. Targets, history, the rollout
 * and its audit entry land in one atomic write; delivery reads the targets.
 *
 * Secrets: a rendered config holds each secret as its marker (render/secrets.ts),
 * so what is stored, hashed and shown never holds a plaintext. Only the body
 * handed to a collector's channel (`delivered`) has them in, kept in memory.
 * What a collector reports back (its effective config, its errors) may quote
 * them, so it is redacted before it is stored (`redact`).
 */
import { auditEntry, SYSTEM_ACTOR, type Actor } from "../audit/audit.ts";
import type { Collector } from "../../shared/collectors.ts";
import { COLLECTORS, type Collectors } from "../collectors/collectors.ts";
import type { ConfigStore } from "../configstore/configstore.ts";
import { AppError, ConflictError, NotFoundError, type ErrorDetail } from "../errors.ts";
import type { Logger } from "pino";
import { deliverable } from "../render/secrets.ts";
import { MissingSecretError, type SecretVault } from "../secrets/vault.ts";
import { plaintextRedactor } from "../secrets/redact.ts";
import { markedSecrets } from "../secrets/values.ts";
import { Coalescer } from "../store/coalesce.ts";
import type { Store, WriteOp } from "../store/store.ts";
import { fleetRenderer, type RenderedConfig } from "./renderer.ts";
import { matchedPipelineIds, matcherPipelines } from "../collectors/matching.ts";
import type { Snapshot } from "../configstore/layout.ts";
import { compileFilter } from "../../shared/collector-filter.ts";
import type { Matcher } from "../../shared/matchers.ts";
import type { ConfigState, HistoryEntry as HistoryView, PublishPlan, Rollout, RolloutCollectorState, RolloutStatus, RolloutSummary } from "../../shared/rollouts.ts";
import { countBatch, cutBatches, nextStep, storedStrategy, type Strategy } from "./strategy.ts";
import { publishPlan } from "./publish-plan.ts";
import { configDrift, type Drift } from "./drift.ts";
import { redactTokens } from "../auth/tokens.ts";

export type { ConfigState, RolloutCollectorState } from "../../shared/rollouts.ts";
export type { Rollout, RolloutStatus };

/** Where one collector's configuration stands: `collector_config/<collectorId>`. */
export interface CollectorConfig {
  collectorId: string;
  targetHash: string;
  targetCommit: string;
  targetSeq: number;
  state: ConfigState;
  error: string | null;
  /**
   * Set while the target could not be delivered (a secret it names cannot
   * be opened here; state "failed", `error` says why). Delivering it, or the
   * collector reporting on it, clears it.
   */
  undelivered?: true;
  /**
   * Set by a rollback: fleet publishes and attribute changes leave this
   * collector on this config (the plan lists it as pinned) until it is
   * unpinned or a publish names it.
   */
  pinned?: { at: string; actor: string };
  /**
   * Set when the collector went back on its own to a config it ran before
   * (the OpAMP supervisor's last-known-good) after this target failed: the
   * target is not offered again until a new target or an explicit retry.
   */
  collectorRollback?: { toSeq: number | null; toHash: string; at: string };
  /** Whether the effective config the collector last reported differs from this target in what it runs (drift.ts). */
  drift?: TargetDrift;
  /** When the target was recorded (absent on targets older than issue 22): tells a retarget which commit the collector is on. */
  targetAt?: string;
  updatedAt: string;
}

/** Why a history entry was recorded; absent on old entries (publish, or rollback when `rollbackOf` is set). */
export type HistoryCause = "publish" | "rollback" | "attributes";

/** A drift check's answer, for the target it was made against. */
export interface TargetDrift extends Drift {
  targetHash: string;
  checkedAt: string;
}

/** One pushed config: `config_history/<collectorId>/<seq>`. */
export interface HistoryEntry {
  seq: number;
  commit: string;
  hash: string;
  time: string;
  state: ConfigState;
  actor: string;
  rollbackOf?: number;
  cause?: HistoryCause;
  /** The collector's message when it failed this config. */
  error?: string;
  /** The collector returned to this earlier entry after failing this one. */
  collectorRolledBackTo?: number;
}

/**
 * Why a collector's config could not be rendered again after its attributes
 * changed (retarget.ts): `render_failures/<collectorId>`, kept until a later
 * render of it succeeds or a publish renders the fleet.
 */
export interface RenderFailure {
  collectorId: string;
  commit: string;
  error: string;
  at: string;
}

/** The latest publish to the whole fleet: the commit collectors without a later target of their own are on. */
export interface FleetPublish {
  commit: string;
  at: string;
}

/** A staged rollout's target for a collector whose batch is not released yet: `rollout_pending/<rolloutId>/<collectorId>`. */
export interface PendingTarget {
  hash: string;
}

/** What a publish covers and how it rolls out. */
export interface PublishOptions extends PublishScope {
  /** Publish to the collectors whose config renders and leave the others as they are. */
  skipErrors?: boolean;
  /** Release the changed collectors batch by batch (strategy.ts); absent: all at once. */
  strategy?: Strategy;
  /** Collectors of the canary batch, resolved by the edge from ids or matchers. */
  canary?: (collector: Collector) => boolean;
}

/**
 * What became of a pushed config: the latest is where it stands (current,
 * applying, failed, outdated); an earlier one failed, was rolled back by
 * the collector itself or by an operator (the entry after it restores an
 * older one), or was superseded by the next publish.
 */
export function historyState(entry: HistoryEntry, next: HistoryEntry | undefined): HistoryView["state"] {
  if (entry.collectorRolledBackTo !== undefined) return "rolled_back_by_collector";
  if (next === undefined || entry.state === "failed") return entry.state;
  return next.rollbackOf !== undefined ? "rolled_back" : "superseded";
}

/** A collector's place in a rollout: offline first (nothing reaches it), then reporting only, else its config state. */
export function rolloutState(collector: Collector, target: CollectorConfig): RolloutCollectorState {
  if (collector.status === "offline") return "offline";
  if (collector.health?.acceptsRemoteConfig === false) return "reporting_only";
  return target.state;
}

export const CONFIGS = "collector_config";
const HISTORY = "config_history";
export const RENDERED = "rendered_configs";
export const RENDER_FAILURES = "render_failures";
export const ROLLOUTS = "rollouts";
export const PENDING = "rollout_pending";
export const EFFECTIVE = "effective_configs";
const LATEST = { collection: "system", id: "latest_rollout" };
const FLEET = { collection: "system", id: "fleet_publish" };
/** The staged rollout with batches left to release, while there is one (a rollback of one collector meanwhile does not end it). */
export const ACTIVE = { collection: "system", id: "active_rollout" };

const historyId = (collectorId: string, seq: number) => `${collectorId}/${String(seq).padStart(10, "0")}`;

/**
 * Writes for a new target: the collector's target and its history entry (the
 * rendered bytes are stored by hash). `expect` guards the target document
 * (its version, or "absent") when the caller read it and must not overwrite
 * a newer one.
 */
export function targetWrites(collectorId: string, entry: HistoryEntry, expect?: number | "absent", pinned?: CollectorConfig["pinned"]): WriteOp[] {
  const target: CollectorConfig = {
    collectorId,
    targetHash: entry.hash,
    targetCommit: entry.commit,
    targetSeq: entry.seq,
    state: "outdated",
    error: null,
    ...(pinned ? { pinned } : {}),
    targetAt: entry.time,
    updatedAt: entry.time,
  };
  return [
    { op: "put", collection: CONFIGS, id: collectorId, data: target, ...(expect === undefined ? {} : { expect }) },
    { op: "put", collection: HISTORY, id: historyId(collectorId, entry.seq), data: entry, expect: "absent" },
  ];
}

/**
 * The latest fleet publish, or null before the first. Servers before issue 22
 * did not record it: then the latest rollout says, when it is a fleet publish
 * (after a rollback or one collector's publish, targets keep their own commits
 * until the next fleet publish records it).
 */
export async function latestFleetPublish(store: Store): Promise<FleetPublish | null> {
  const recorded = await store.get<FleetPublish>(FLEET.collection, FLEET.id);
  if (recorded) return recorded.data;
  const latest = await store.get<{ rolloutId: string }>(LATEST.collection, LATEST.id);
  const rollout = latest && (await store.get<Rollout>(ROLLOUTS, latest.data.rolloutId))?.data;
  return rollout?.kind === "publish" && rollout.scope === "fleet" ? { commit: rollout.commit, at: rollout.startedAt } : null;
}

/** What a collector says of a config it was given (OpAMP RemoteConfigStatus, remote config's status). */
export interface ConfigReport {
  hash: string;
  state: "applying" | "applied" | "failed";
  error?: string;
}

/** The config a collector says it runs: `effective_configs/<collectorId>`. */
export interface EffectiveConfig {
  collectorId: string;
  files: { name: string; contentType: string; body: string }[];
  reportedAt: string;
}

/** Which collectors a publish or its plan covers: the named ones, or the fleet's affected collectors the matchers select. */
export interface PublishScope {
  collectorIds?: readonly string[];
  match?: readonly Matcher[];
}

type TargetListener = (collectorId: string | undefined) => void;

/** Rendered configs kept decoded in memory (a change, which only the secrets upgrade makes, drops one), bounded by count. */
const RENDERED_CACHE = 5000;

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
  private readonly renderedByHash = new Map<string, RenderedConfig>();
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

  constructor(
    private readonly store: Store,
    private readonly config: ConfigStore,
    private readonly collectors: Collectors,
    private readonly vault: Pick<SecretVault, "open">,
    private readonly log: Logger,
  ) {
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
    await Promise.all([this.configWrites.close(), this.historyWrites.close()]);
  }

  /**
   * Publishes the head commit to the fleet's affected collectors (or those of
   * the scope): renders each, and gives a new target to every one whose
   * config changes, all at once or, with a strategy, batch by batch
   * (`advance` releases the later ones). Refused while a collector's config
   * cannot be rendered, unless `skipErrors` (those keep what they run), and
   * while a staged rollout is running or paused.
   */
  async publish(who: Actor, options: PublishOptions = {}): Promise<Rollout> {
    const commit = await this.config.head();
    if (commit === null) throw new ConflictError("Nothing has been committed yet; commit the pending changes first.", "no_commit");
    const active = await this.activeStaged();
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

    const render = fleetRenderer(snapshot);
    const now = new Date().toISOString();
    const renderedOps: WriteOp[] = [];
    /** Collectors with equal configs share one rendered document. */
    const renderedPuts = new Set<string>();
    const next = new Map<string, string>();
    const failures: ErrorDetail[] = [];
    const pinned: string[] = [];
    const named = new Set(options.collectorIds ?? []);
    for (const collector of affected) {
      if (targets.get(collector.id)?.pinned && !named.has(collector.id)) {
        pinned.push(collector.id);
        continue;
      }
      let rendered: RenderedConfig;
      try {
        rendered = render(collector);
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        failures.push({ path: `collectors/${collector.id}`, message: `${collector.name}: ${error.details[0]?.message ?? error.message}` });
        continue;
      }
      if (targets.get(collector.id)?.targetHash === rendered.hash) continue;
      if (!renderedPuts.has(rendered.hash)) {
        renderedPuts.add(rendered.hash);
        renderedOps.push({ op: "put", collection: RENDERED, id: rendered.hash, data: rendered });
      }
      next.set(collector.id, rendered.hash);
    }
    if (failures.length > 0 && !options.skipErrors) {      throw new ConflictError(`The configuration of ${failures.length} collector(s) cannot be rendered: ${failures[0]!.message}.`, "render_failed", failures);
    }
    const { strategy } = options;
    const canary = options.canary ? new Set(affected.filter(options.canary).map((c) => c.id)) : undefined;
    const batches = strategy ? cutBatches([...next.keys()], strategy, canary) : [[...next.keys()]];
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
      ...(failures.length > 0 ? { skipped: failures.map((f) => f.path.slice("collectors/".length)) } : {}),
      ...(pinned.length > 0 ? { pinned } : {}),
      ...(strategy && batches.length > 1
        ? {
            strategy: storedStrategy(strategy),
            batchEnds: batches.map((_, i) => batches.slice(0, i + 1).reduce((n, b) => n + b.length, 0)),
            released: 0,
            phase: "running" as const,
            pausedReason: null,
            settledAt: null,
          }
        : {}),
    };
    const ops: WriteOp[] = [...renderedOps];
    for (const [index, batch] of batches.entries()) {
      for (const id of batch) {
        const hash = next.get(id)!;
        const entry: HistoryEntry = { seq: (targets.get(id)?.targetSeq ?? 0) + 1, commit, hash, time: now, state: "outdated", actor: who.actor, cause: "publish" };
        if (index === 0) ops.push(...targetWrites(id, entry));
        else ops.push({ op: "put", collection: PENDING, id: `${rollout.id}/${id}`, data: { hash } satisfies PendingTarget, expect: "absent" });
      }
    }
    // Every collector rendered (or a failure refused the publish): what a retarget could not render is moot.
    const rendered = new Set(affected.map((c) => c.id));
    for (const id of renderFailures) if (rendered.has(id) && !failures.some((f) => f.path === `collectors/${id}`)) ops.push({ op: "delete", collection: RENDER_FAILURES, id });
    if (rollout.phase) ops.push({ op: "put", collection: ACTIVE.collection, id: ACTIVE.id, data: { rolloutId: rollout.id } });
    const fleet: WriteOp[] = options.collectorIds === undefined && options.match === undefined ? [{ op: "put", collection: FLEET.collection, id: FLEET.id, data: { commit, at: now } satisfies FleetPublish }] : [];
    await this.store.write(
      [...ops, ...this.rolloutOps(rollout), ...fleet],
      [
        auditEntry(who, "config.publish", "rollout", rollout.id, {
          commit,
          scope: rollout.scope,
          collectors: affected.length,
          changed: changed.length,
          ...(rollout.skipped ? { skipped: rollout.skipped.length } : {}),
          ...(rollout.pinned ? { pinned: rollout.pinned.length } : {}),
          ...(rollout.strategy ? { strategy: rollout.strategy, batches: batches.length } : {}),
        }),
      ],
    );
    return rollout;
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
    return publishPlan({ commit, snapshot, affected, targets, named: new Set(scope.collectorIds), rendered: (hash) => this.storedRendered(hash) });
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
    const keep = scope.match === undefined ? () => true : compileFilter({ match: scope.match });
    return (await this.collectors.all()).filter(
      (c) => keep(c) && (inConfig.has(c.id) || targets.has(c.id) || matchedPipelineIds(c, withMatchers).length > 0),
    );
  }

  private rolloutOps(rollout: Rollout): WriteOp[] {
    return [
      { op: "put", collection: ROLLOUTS, id: rollout.id, data: rollout, expect: "absent" },
      { op: "put", collection: LATEST.collection, id: LATEST.id, data: { rolloutId: rollout.id } },
    ];
  }

  /**
   * Progress of a rollout (the latest publish or rollback when no id is
   * given), computed from the targets so any replica answers the same.
   */
  async status(rolloutId?: string): Promise<RolloutStatus> {
    const counts = countBatch([]);
    const rollout = rolloutId === undefined ? (await this.latest())?.data : await this.rollout(rolloutId);
    if (!rollout) return { rolloutId: null, commit: null, state: "idle", total: 0, counts, collectors: [] };
    const states = await this.collectorStates(rollout, rollout.collectorIds);
    const collectors: RolloutStatus["collectors"] = [];
    for (const [id, { state, error }] of states) {
      counts[state]++;
      collectors.push(error ? { id, state, error } : { id, state });
    }
    const base = { rolloutId: rollout.id, commit: rollout.commit, total: collectors.length, counts, collectors };
    const settled = counts.applying + counts.outdated === 0;
    const outcome = counts.failed > 0 ? "completed_with_errors" : "completed";
    if (!rollout.batchEnds) return { ...base, state: settled ? outcome : "running" };
    const state = rollout.phase === "paused" || rollout.phase === "aborted" ? rollout.phase : rollout.phase === "done" && settled ? outcome : "running";
    return { ...base, state, batches: this.batchProgress(rollout, states), pausedReason: rollout.pausedReason ?? null, eta: this.eta(rollout) };
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

  private async latest() {
    const latest = await this.store.get<{ rolloutId: string }>(LATEST.collection, LATEST.id);
    return latest ? this.store.get<Rollout>(ROLLOUTS, latest.data.rolloutId) : null;
  }

  /** The staged rollout with batches left to release (running or paused), with its version. */
  private async activeStaged() {
    const active = await this.store.get<{ rolloutId: string }>(ACTIVE.collection, ACTIVE.id);
    const doc = active ? await this.store.get<Rollout>(ROLLOUTS, active.data.rolloutId) : null;
    return doc && (doc.data.phase === "running" || doc.data.phase === "paused") ? doc : null;
  }

  /** Where each of `ids` stands in `rollout`: queued when its staged batch is not released, else by its target. */
  private async collectorStates(rollout: Rollout, ids: readonly string[]): Promise<Map<string, { state: RolloutCollectorState; error?: string }>> {
    const queued = new Set(rollout.batchEnds ? rollout.changed.slice(rollout.batchEnds[rollout.released ?? 0]) : []);
    const targets = await this.store.getMany<CollectorConfig>(CONFIGS, ids.filter((id) => !queued.has(id)));
    const out = new Map<string, { state: RolloutCollectorState; error?: string }>();
    for (const id of ids) {
      if (queued.has(id)) {
        out.set(id, { state: "queued" });
        continue;
      }
      const target = targets.get(id)?.data;
      const collector = await this.collectors.get(id).catch(() => null);
      if (!target || !collector) continue;
      out.set(id, target.error ? { state: rolloutState(collector, target), error: target.error } : { state: rolloutState(collector, target) });
    }
    return out;
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
    const doc = await this.activeStaged();
    if (!doc || doc.data.phase !== "running") return null;
    const rollout = doc.data;
    const released = rollout.released ?? 0;
    const ends = rollout.batchEnds!;
    const batch = rollout.changed.slice(released === 0 ? 0 : ends[released - 1], ends[released]);
    const counts = countBatch([...(await this.collectorStates(rollout, batch)).values()].map((s) => s.state));
    const now = Date.now();
    const settledAt = rollout.settledAt ? Date.parse(rollout.settledAt) : null;
    const step = nextStep({ strategy: rollout.strategy!, batches: ends.length, released, settledAt, acceptedThrough: rollout.acceptedThrough ?? -1 }, counts, now);
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
        await this.store.write(put({ ...rollout, phase: "paused", pausedReason: step.reason }), [
          auditEntry(SYSTEM_ACTOR, "rollout.pause", "rollout", rollout.id, { batch: released, reason: step.reason }),
        ]);
        return null;
      }
      if (step.kind === "complete") {
        await this.store.write(put({ ...rollout, phase: "done" }, [endActive]), [auditEntry(SYSTEM_ACTOR, "rollout.complete", "rollout", rollout.id, { batches: ends.length })]);
        return null;
      }
      const ids = rollout.changed.slice(ends[step.batch - 1], ends[step.batch]);
      const [pending, targets] = await Promise.all([
        this.store.getMany<PendingTarget>(PENDING, ids.map((id) => `${rollout.id}/${id}`)),
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
        ops.push(...targetWrites(id, { seq, commit: rollout.commit, hash: waiting.data.hash, time, state: "outdated", actor: rollout.actor, cause: "publish" }));
      }
      await this.store.write(put({ ...rollout, released: step.batch, settledAt: null }, ops), [
        auditEntry(SYSTEM_ACTOR, "rollout.batch", "rollout", rollout.id, { batch: step.batch, collectors: ops.filter((op) => op.collection === CONFIGS).length }),
      ]);
      return now;
    } catch (error) {
      // Another replica (or an operator's pause) moved the rollout first: look again.
      if (error instanceof ConflictError) return now;
      throw error;
    }
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
        await this.rollback(who, collectorId);
        rolledBack.push(collectorId);
      }
    }
    return { rollout, rolledBack };
  }

  private async changePhase(who: Actor, id: string, action: string, change: (rollout: Rollout) => Rollout, extra: WriteOp[] = []): Promise<Rollout> {
    const doc = await this.store.get<Rollout>(ROLLOUTS, id);
    if (!doc) throw new NotFoundError("Rollout", id);
    if (!doc.data.batchEnds) throw new ConflictError(`Rollout ${id} was not staged; only staged rollouts can be paused, resumed or aborted.`, "rollout_not_staged");
    const next = change(doc.data);
    await this.store.write([...extra, { op: "put", collection: ROLLOUTS, id, data: next, expect: doc.version }], [
      auditEntry(who, action, "rollout", id, { batch: next.released ?? 0 }),
    ]);
    return next;
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
    return entries.map((entry, i) => ({ ...entry, state: historyState(entry, entries[i + 1]) }));
  }

  /** Re-targets the collector's previous pushed config, recorded as a new history entry. */
  async rollback(who: Actor, collectorId: string): Promise<HistoryEntry> {
    const history = await this.history(collectorId);
    const current = history[history.length - 1];
    const previous = current && [...history].reverse().find((entry) => entry.hash !== current.hash);
    if (!current || !previous) {
      throw new ConflictError("This collector has no previous pushed config to roll back to.", "no_previous_config");
    }
    const rendered = await this.storedRendered(previous.hash);
    if (!rendered) throw new NotFoundError("Rendered config", previous.hash);
    const now = new Date().toISOString();
    const entry: HistoryEntry = {
      seq: current.seq + 1,
      commit: previous.commit,
      hash: previous.hash,
      time: now,
      state: "outdated",
      actor: who.actor,
      rollbackOf: previous.seq,
      cause: "rollback",
    };
    const rollout: Rollout = {
      id: Bun.randomUUIDv7(),
      kind: "rollback",
      commit: previous.commit,
      actor: who.actor,
      startedAt: now,
      scope: collectorId,
      collectorIds: [collectorId],
      changed: [collectorId],
    };
    await this.store.write(
      [...targetWrites(collectorId, entry, undefined, { at: now, actor: who.actor }), ...this.rolloutOps(rollout)],
      [auditEntry(who, "config.rollback", "collector", collectorId, { toSeq: previous.seq, commit: previous.commit, hash: previous.hash, pinned: true })],
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
    await this.store.write(
      [{ op: "put", collection: CONFIGS, id: collectorId, data: { ...rest, state: "outdated", error: null, updatedAt: new Date().toISOString() }, expect: doc.version }],
      [auditEntry(who, "config.retry", "collector", collectorId, { seq: rest.targetSeq })],
    );
  }

  /**
   * A rendered config by its hash (history entries name it) as the store
   * holds it now, not from the delivery cache: the secrets upgrade
   * (secrets/upgrade.ts) may since have replaced a plaintext in it by its
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

  private async targetDoc(collectorId: string): Promise<CollectorConfig | null> {
    let target = this.targets.get(collectorId);
    if (target === undefined) {
      const epoch = this.targetsEpoch;
      target = (await this.store.get<CollectorConfig>(CONFIGS, collectorId))?.data ?? null;
      if (epoch === this.targetsEpoch) this.targets.set(collectorId, target);
    }
    return target;
  }

  private async rendered(hash: string): Promise<RenderedConfig | null> {
    let rendered = this.renderedByHash.get(hash);
    if (!rendered) {
      rendered = (await this.store.get<RenderedConfig>(RENDERED, hash))?.data;
      if (!rendered) return null;
      if (this.renderedByHash.size >= RENDERED_CACHE) this.renderedByHash.delete(this.renderedByHash.keys().next().value!);
      this.renderedByHash.set(hash, rendered);
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
   * text spells it (see secrets/redact.ts), and any svc token cut short. Markers already there stay, so
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
    if (seq !== null && state === "current") {
      const effective = (await this.store.get<EffectiveConfig>(EFFECTIVE, collectorId))?.data;
      if (effective) await this.checkDrift(collectorId, effective.files);
    }
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

  /** Stores the config the collector says it runs (shown beside the target), redacted: it holds what was delivered. */
  async setEffective(collectorId: string, files: EffectiveConfig["files"]): Promise<void> {
    const redacted = await Promise.all(files.map(async (file) => ({ ...file, body: await this.redact(collectorId, file.body) })));
    const data: EffectiveConfig = { collectorId, files: redacted, reportedAt: new Date().toISOString() };
    await this.store.write([{ op: "put", collection: EFFECTIVE, id: collectorId, data }]);
    await this.checkDrift(collectorId, redacted);
  }

  /**
   * Compares what the collector says it runs with its target (drift.ts) and
   * keeps the answer on the target when it changed. Also run when a target
   * turns current: the effective config and the status may come in either order.
   */
  private async checkDrift(collectorId: string, files: EffectiveConfig["files"]): Promise<void> {
    const current = await this.target(collectorId);
    if (!current) return;
    const { targetHash } = current.target;
    const result = configDrift(current.rendered.runtime, current.rendered.body, files);
    const drift: TargetDrift = { ...result, targetHash, checkedAt: new Date().toISOString() };
    await this.configWrites.update(collectorId, (target) => {
      if (!target || target.targetHash !== targetHash) return null;
      const known = target.drift;
      if (known && known.drifted === drift.drifted && known.diff === drift.diff && known.reason === drift.reason) return null;
      return { ...target, drift };
    });
  }

  /** The collectors that run something other than their applied target, in id order: online, current, drifted. */
  async drifted(): Promise<{ collectorId: string; name: string; reason: string | null; checkedAt: string }[]> {
    const out = [];
    for (const { data } of await this.store.list<CollectorConfig>(CONFIGS)) {
      if (data.state !== "current" || !data.drift?.drifted) continue;
      const collector = await this.collectors.get(data.collectorId).catch(() => null);
      if (!collector || rolloutState(collector, data) !== "current") continue;
      out.push({ collectorId: data.collectorId, name: collector.name, reason: data.drift.reason ?? null, checkedAt: data.drift.checkedAt });
    }
    return out;
  }

  async effective(collectorId: string): Promise<EffectiveConfig | null> {
    await this.collectors.get(collectorId);
    return (await this.store.get<EffectiveConfig>(EFFECTIVE, collectorId))?.data ?? null;
  }
}
