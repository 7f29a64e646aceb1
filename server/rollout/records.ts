/**
 * What the rollout keeps in the store, and the small rules over it that more
 * than one part of the rollout reads: a collector's target and its history,
 * rendered configs by hash, render failures, staged rollouts' queued targets,
 * and which publish the fleet is on (docs/architecture.md "The configuration
 * lifecycle" and "Status model").
 */
import type { Collector } from "../../shared/collectors.ts";
import type { ConfigState, HistoryEntry as HistoryView, Rollout, RolloutCollectorState, SkippedCollector } from "../../shared/rollouts.ts";
import type { Actor } from "../audit/audit.ts";
import type { Doc, Store, WriteOp } from "../store/store.ts";
import type { Drift } from "./drift.ts";

export type { ConfigState, Rollout, RolloutCollectorState, RolloutStatus } from "../../shared/rollouts.ts";

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
  /** How often an operator asked for this target to be offered again after the collector went back from it. */
  retries?: number;
  /** Whether the effective config the collector last reported differs from this target in what it runs (drift.ts). */
  drift?: TargetDrift;
  /** When the target was recorded (absent on targets older than issue 22): tells a retarget which commit the collector is on. */
  targetAt?: string;
  /** The rollout that recorded the target (absent on targets older than issue 34): which rollout its state counts for. */
  rolloutId?: string;
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
  /** The rollout that recorded it (absent on entries older than issue 34); its target carries the same. */
  rolloutId?: string;
}

/**
 * Why a collector's config could not be rendered, so it kept the one it runs:
 * found by a publish that skipped it (rollout.ts) or after its attributes
 * changed (retarget.ts, attribute-rollout.ts). `render_failures/<collectorId>`,
 * kept until a later render of it succeeds.
 */
export interface RenderFailure {
  collectorId: string;
  commit: string;
  error: string;
  at: string;
  /** The rollout that skipped it, when one did. */
  rolloutId?: string;
}

/** The latest publish to the whole fleet: the commit collectors without a later target of their own are on. */
export interface FleetPublish {
  commit: string;
  at: string;
}

/**
 * A publish whose writes are still being stored, slice by slice
 * (publish-writes.ts): `rollout_writes/<rolloutId>`, put by its first slice,
 * moved on by each slice in the same write, deleted by its last. Found
 * without a live writer, the publish was interrupted and is recorded so.
 */
export interface RolloutWrite {
  rolloutId: string;
  /** How many of the rollout's `changed`, from the first, have their writes (target and history, or queued target) stored. */
  written: number;
  /** Who asked for the publish, for its audit entry when it has to be written for them. */
  who: Actor;
  /** The audit entry's details as the publish would write them, counts aside. */
  details: Record<string, unknown>;
}

/** A staged rollout's target for a collector whose batch is not released yet: `rollout_pending/<rolloutId>/<collectorId>`. */
export interface PendingTarget {
  hash: string;
  /** The commit it was rendered at, when not the rollout's (an attribute rollout renders each collector at the commit it is on). */
  commit?: string;
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

/**
 * Whether the target says its collector is no longer `rollout`'s to count: a
 * later rollout recorded it, or it is what this interrupted publish wrote and
 * a later publish took it over (`resumedBy`). Undefined when the target does
 * not name its rollout (recorded before issue 34).
 */
export function handedOn(rollout: Rollout, target: CollectorConfig): boolean | undefined {
  if (target.rolloutId === undefined) return undefined;
  return target.rolloutId > rollout.id || (rollout.resumedBy !== undefined && target.rolloutId === rollout.id);
}

/** A collector's place in a rollout: offline first (nothing reaches it), then reporting only, else its config state. */
export function rolloutState(collector: Collector, target: CollectorConfig): RolloutCollectorState {
  if (collector.status === "offline") return "offline";
  if (collector.health?.acceptsRemoteConfig === false) return "reporting_only";
  return target.state;
}

export const CONFIGS = "collector_config";
export const HISTORY = "config_history";
export const RENDERED = "rendered_configs";
export const RENDER_FAILURES = "render_failures";
export const ROLLOUTS = "rollouts";
export const PENDING = "rollout_pending";
export const EFFECTIVE = "effective_configs";
export const WRITES = "rollout_writes";
export const LATEST = { collection: "system", id: "latest_rollout" };
export const FLEET = { collection: "system", id: "fleet_publish" };
/** The latest publish to the fleet (not to one collector, nor a rollback or an attribute change): what the dashboard and Changes show. */
export const LATEST_FLEET = { collection: "system", id: "latest_fleet_rollout" };
/** The staged rollout with batches left to release, while there is one (a rollback of one collector meanwhile does not end it). */
export const ACTIVE = { collection: "system", id: "active_rollout" };

export const historyId = (collectorId: string, seq: number) => `${collectorId}/${String(seq).padStart(10, "0")}`;

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
    ...(entry.rolloutId ? { rolloutId: entry.rolloutId } : {}),
    targetAt: entry.time,
    updatedAt: entry.time,
  };
  return [
    { op: "put", collection: CONFIGS, id: collectorId, data: target, ...(expect === undefined ? {} : { expect }) },
    { op: "put", collection: HISTORY, id: historyId(collectorId, entry.seq), data: entry, expect: "absent" },
  ];
}

/** The writes that record a new rollout and make it the latest (of the fleet's too, for a fleet publish). */
export function rolloutOps(rollout: Rollout): WriteOp[] {
  return [
    { op: "put", collection: ROLLOUTS, id: rollout.id, data: rollout, expect: "absent" },
    { op: "put", collection: LATEST.collection, id: LATEST.id, data: { rolloutId: rollout.id } },
    ...(rollout.kind === "publish" && rollout.scope === "fleet"
      ? [{ op: "put" as const, collection: LATEST_FLEET.collection, id: LATEST_FLEET.id, data: { rolloutId: rollout.id } }]
      : []),
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

/**
 * The collectors a rollout skipped, with their reasons. Rollouts recorded
 * before reasons were kept (issue 33) hold bare ids: read as skipped for a
 * reason not recorded.
 */
export function rolloutSkipped(rollout: Rollout): SkippedCollector[] {
  return (rollout.skipped ?? []).map((entry: SkippedCollector | string) =>
    typeof entry === "string"
      ? { collectorId: entry, name: entry, path: null, message: "its config could not be rendered (the reason was not recorded)" }
      : entry,
  );
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
  /** The last report was not kept (too large): when and why; `files` are the last ones kept. */
  refused?: { at: string; reason: string };
}

/** The staged rollout with batches left to release (running or paused), with its version; null when there is none. */
export async function activeStagedRollout(store: Store): Promise<Doc<Rollout> | null> {
  const active = await store.get<{ rolloutId: string }>(ACTIVE.collection, ACTIVE.id);
  const doc = active ? await store.get<Rollout>(ROLLOUTS, active.data.rolloutId) : null;
  return doc && (doc.data.phase === "running" || doc.data.phase === "paused") ? doc : null;
}
