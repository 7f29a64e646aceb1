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
import { auditEntry, type Actor } from "../audit/audit.ts";
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
import type { PublishPlan } from "../../shared/rollouts.ts";
import { publishPlan } from "./publish-plan.ts";

export type ConfigState = "current" | "applying" | "failed" | "outdated";

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
  updatedAt: string;
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
}

export interface Rollout {
  id: string;
  kind: "publish" | "rollback";
  commit: string;
  actor: string;
  startedAt: string;
  /** "fleet", or the one collector id it was for. */
  scope: string;
  collectorIds: string[];
  changed: string[];
}

/**
 * Where a collector stands in a rollout: its config state, or, counted apart
 * and never blocking completion, offline or reporting only (connected without
 * the means to take remote config).
 */
export type RolloutCollectorState = ConfigState | "offline" | "reporting_only";

export interface RolloutStatus {
  rolloutId: string | null;
  commit: string | null;
  state: "idle" | "running" | "completed" | "completed_with_errors";
  total: number;
  counts: Record<RolloutCollectorState, number>;
  collectors: { id: string; state: RolloutCollectorState; error?: string }[];
}

/** A collector's place in a rollout: offline first (nothing reaches it), then reporting only, else its config state. */
export function rolloutState(collector: Collector, target: CollectorConfig): RolloutCollectorState {
  if (collector.status === "offline") return "offline";
  if (collector.health?.acceptsRemoteConfig === false) return "reporting_only";
  return target.state;
}

const CONFIGS = "collector_config";
const HISTORY = "config_history";
export const RENDERED = "rendered_configs";
const ROLLOUTS = "rollouts";
export const EFFECTIVE = "effective_configs";
const LATEST = { collection: "system", id: "latest_rollout" };

const historyId = (collectorId: string, seq: number) => `${collectorId}/${String(seq).padStart(10, "0")}`;

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

  /** Publishes the head commit to the fleet, or to one collector. */
  async publish(who: Actor, collectorId?: string): Promise<Rollout> {
    const commit = await this.config.head();
    if (commit === null) throw new ConflictError("Nothing has been committed yet; commit the pending changes first.", "no_commit");
    const snapshot = await this.config.snapshotAt(commit);
    const targets = await this.allTargets();
    const affected = await this.affected(snapshot, targets, collectorId === undefined ? {} : { collectorIds: [collectorId] });

    const render = fleetRenderer(snapshot);
    const now = new Date().toISOString();
    const ops: WriteOp[] = [];
    /** Collectors with equal configs share one rendered document. */
    const renderedPuts = new Set<string>();
    const changed: string[] = [];
    const failures: ErrorDetail[] = [];
    for (const collector of affected) {
      let rendered: RenderedConfig;
      try {
        rendered = render(collector);
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        failures.push({ path: `collectors/${collector.id}`, message: `${collector.name}: ${error.details[0]?.message ?? error.message}` });
        continue;
      }
      const current = targets.get(collector.id);
      if (current?.targetHash === rendered.hash) continue;
      const seq = (current?.targetSeq ?? 0) + 1;
      if (!renderedPuts.has(rendered.hash)) {
        renderedPuts.add(rendered.hash);
        ops.push({ op: "put", collection: RENDERED, id: rendered.hash, data: rendered });
      }
      ops.push(...this.targetOps(collector.id, { seq, commit, hash: rendered.hash, time: now, state: "outdated", actor: who.actor }));
      changed.push(collector.id);
    }
    if (failures.length > 0) {
      throw new ConflictError(`The configuration of ${failures.length} collector(s) cannot be rendered: ${failures[0]!.message}.`, "render_failed", failures);
    }
    const rollout: Rollout = {
      id: Bun.randomUUIDv7(),
      kind: "publish",
      commit,
      actor: who.actor,
      startedAt: now,
      scope: collectorId ?? "fleet",
      collectorIds: affected.map((c) => c.id),
      changed,
    };
    await this.store.write(
      [...ops, ...this.rolloutOps(rollout)],
      [auditEntry(who, "config.publish", "rollout", rollout.id, { commit, scope: rollout.scope, collectors: affected.length, changed: changed.length })],
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
    return publishPlan({ commit, snapshot, affected, targets, rendered: (hash) => this.storedRendered(hash) });
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

  /** Writes for a new target: the collector's target and its history entry (the rendered bytes are stored by hash). */
  private targetOps(collectorId: string, entry: HistoryEntry): WriteOp[] {
    const target: CollectorConfig = {
      collectorId,
      targetHash: entry.hash,
      targetCommit: entry.commit,
      targetSeq: entry.seq,
      state: "outdated",
      error: null,
      updatedAt: entry.time,
    };
    return [
      { op: "put", collection: CONFIGS, id: collectorId, data: target },
      { op: "put", collection: HISTORY, id: historyId(collectorId, entry.seq), data: entry, expect: "absent" },
    ];
  }

  private rolloutOps(rollout: Rollout): WriteOp[] {
    return [
      { op: "put", collection: ROLLOUTS, id: rollout.id, data: rollout, expect: "absent" },
      { op: "put", collection: LATEST.collection, id: LATEST.id, data: { rolloutId: rollout.id } },
    ];
  }

  /** Progress of the latest publish or rollback, computed from the targets so any replica answers the same. */
  async status(): Promise<RolloutStatus> {
    const counts = { current: 0, applying: 0, failed: 0, outdated: 0, offline: 0, reporting_only: 0 };
    const latest = await this.store.get<{ rolloutId: string }>(LATEST.collection, LATEST.id);
    const rollout = latest ? (await this.store.get<Rollout>(ROLLOUTS, latest.data.rolloutId))?.data : undefined;
    if (!rollout) return { rolloutId: null, commit: null, state: "idle", total: 0, counts, collectors: [] };
    const collectors: RolloutStatus["collectors"] = [];
    for (const id of rollout.collectorIds) {
      const target = (await this.store.get<CollectorConfig>(CONFIGS, id))?.data;
      const collector = await this.collectors.get(id).catch(() => null);
      if (!target || !collector) continue;
      const state = rolloutState(collector, target);
      counts[state]++;
      collectors.push(target.error ? { id, state, error: target.error } : { id, state });
    }
    const state = counts.applying + counts.outdated > 0 ? "running" : counts.failed > 0 ? "completed_with_errors" : "completed";
    return { rolloutId: rollout.id, commit: rollout.commit, state, total: collectors.length, counts, collectors };
  }

  /** Every config pushed to a collector, oldest first. */
  async history(collectorId: string): Promise<HistoryEntry[]> {
    await this.collectors.get(collectorId);
    return (await this.store.list<HistoryEntry>(HISTORY, { prefix: `${collectorId}/` })).map((d) => d.data);
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
      [...this.targetOps(collectorId, entry), ...this.rolloutOps(rollout)],
      [auditEntry(who, "config.rollback", "collector", collectorId, { toSeq: previous.seq, commit: previous.commit, hash: previous.hash })],
    );
    return entry;
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
   * text spells it (see secrets/redact.ts). Markers already there stay, so
   * redacting twice changes nothing. A secret this server cannot open is
   * left out: it cannot have been delivered from here.
   */
  async redact(collectorId: string, text: string): Promise<string> {
    return (await this.redaction(collectorId)).redact(text);
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
   * config other than its current target are stale and change nothing.
   */
  async report(collectorId: string, report: ConfigReport): Promise<void> {
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
    if (seq !== null) {
      await this.historyWrites.update(historyId(collectorId, seq), (entry) =>
        entry && entry.hash === report.hash && entry.state !== state ? { ...entry, state } : null,
      );
    }
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
  }

  async effective(collectorId: string): Promise<EffectiveConfig | null> {
    await this.collectors.get(collectorId);
    return (await this.store.get<EffectiveConfig>(EFFECTIVE, collectorId))?.data ?? null;
  }
}
