/**
 * Webhook events, read from the store's change feed in one place rather than
 * emitted by each domain module:
 * - `rollout.paused`: a staged rollout's phase turns paused (server/rollout/staged.ts);
 * - `rollout.completed`: any rollout ended (its `ended`, server/rollout/ends.ts),
 *   and `rollout.failed` too when it ended with a collector failed or aborted;
 * - `collector.drifted`: a target's `drift.drifted` turns true (rollout.ts checkDrift);
 * - `collector.offline`: a collector's status turns offline; sent after
 *   `offlineMinutes` only if it is still offline with the same lastSeen.
 * Every replica of an external store sees every change; the event key makes
 * the queued delivery one per hook (Webhooks.emit).
 */
import type { Logger } from "pino";
import { COLLECTORS } from "../collectors/collectors.ts";
import { CONFIGS, ROLLOUTS, type CollectorConfig, type Rollout } from "../rollout/records.ts";
import type { Change, Store } from "../store/store.ts";
import type { Collector } from "../../shared/collectors.ts";
import type { WebhookEvent } from "../../shared/webhooks.ts";
import { HOOKS, type Webhooks } from "./webhooks.ts";

export interface WebhookEventsOptions {
  offlineMinutes?: number;
  now?: () => number;
}

/** The events each watched collection can yield: a collection no hook wants is not read. */
const YIELDS: Record<string, WebhookEvent[]> = {
  [ROLLOUTS]: ["rollout.paused", "rollout.completed", "rollout.failed"],
  [CONFIGS]: ["collector.drifted"],
  [COLLECTORS]: ["collector.offline"],
};

export class WebhookEvents {
  private unwatch: (() => void) | undefined;
  /**
   * Last seen per document, to skip re-reads of a state already emitted. The
   * document is read when handled, so quick writes coalesce: the event key
   * (the offline episode's lastSeen, the drift check's time) dedupes instead.
   */
  private readonly lastStatus = new Map<string, string>();
  private readonly lastDrifted = new Map<string, boolean>();
  private chain: Promise<void> = Promise.resolve();
  /** The events some hook subscribes to, read again when the hooks change. */
  private wanted = new Set<WebhookEvent>();
  private readonly offlineMs: number;
  private readonly now: () => number;

  constructor(
    private readonly store: Store,
    private readonly hooks: Webhooks,
    private readonly logger: Logger,
    options: WebhookEventsOptions = {},
  ) {
    this.offlineMs = (options.offlineMinutes ?? 5) * 60_000;
    this.now = options.now ?? Date.now;
  }

  start(): void {
    const then = (work: () => Promise<void>) => {
      // One at a time and in order, off the writer's path.
      this.chain = this.chain.then(work).catch((error) => this.logger.warn({ err: error }, "webhook events failed"));
    };
    const reload = () => then(() => this.loadWanted());
    reload();
    this.unwatch = this.store.watch((changes) => {
      if (changes.some((c) => c.collection === HOOKS)) reload();
      const puts = changes.filter((c) => c.op === "put" && c.collection in YIELDS);
      // Filtered when handled, after any reload queued before it.
      if (puts.length > 0) then(() => this.handle(puts.filter((c) => YIELDS[c.collection]!.some((e) => this.wanted.has(e)))));
    }, reload);
  }

  async stop(): Promise<void> {
    this.unwatch?.();
    await this.chain;
  }

  /** Resolves once the changes seen so far are handled (tests). */
  settled(): Promise<void> {
    return this.chain;
  }

  private async loadWanted(): Promise<void> {
    this.wanted = new Set((await this.hooks.list()).flatMap((hook) => hook.events));
  }

  private async handle(changes: Change[]): Promise<void> {
    for (const change of changes) {
      if (change.collection === ROLLOUTS) await this.rollout(change.id);
      else if (change.collection === CONFIGS) await this.drift(change.id);
      else await this.presence(change.id);
    }
  }

  private async rollout(id: string): Promise<void> {
    const rollout = (await this.store.get<Rollout>(ROLLOUTS, id))?.data;
    if (!rollout) return;
    const staged = rollout.batchEnds ? { released: rollout.released ?? 0, batches: rollout.batchEnds.length } : {};
    const data = { rolloutId: id, kind: rollout.kind, scope: rollout.scope, commit: rollout.commit, actor: rollout.actor, ...staged };
    if (rollout.phase === "paused" && !rollout.ended) {
      await this.hooks.emit("rollout.paused", `${id}/${rollout.released ?? 0}/${rollout.pausedReason ?? ""}`, {
        ...data,
        reason: rollout.pausedReason ?? null,
      });
    }
    const ended = rollout.ended;
    if (!ended || ended.outcome === "not_recorded") return;
    const outcome = { ...data, outcome: ended.outcome, counts: ended.counts, handedOn: ended.handedOn ?? 0, endedAt: ended.at };
    await this.hooks.emit("rollout.completed", id, outcome);
    if (ended.outcome === "aborted" || ended.counts.failed > 0) await this.hooks.emit("rollout.failed", id, outcome);
  }

  private async drift(collectorId: string): Promise<void> {
    const target = (await this.store.get<CollectorConfig>(CONFIGS, collectorId))?.data;
    const drifted = target?.state === "current" && target.drift?.drifted === true;
    const before = this.lastDrifted.get(collectorId);
    this.lastDrifted.set(collectorId, drifted);
    if (!drifted || before === true || !target?.drift) return;
    await this.hooks.emit("collector.drifted", `${collectorId}/${target.drift.targetHash}/${target.drift.checkedAt}`, {
      collectorId,
      reason: target.drift.reason ?? null,
      checkedAt: target.drift.checkedAt,
    });
  }

  private async presence(collectorId: string): Promise<void> {
    const collector = (await this.store.get<Collector>(COLLECTORS, collectorId))?.data;
    if (!collector) return;
    const before = this.lastStatus.get(collectorId);
    this.lastStatus.set(collectorId, collector.status);
    if (collector.status !== "offline" || before === "offline") return;
    const lastSeen = collector.lastSeen ?? null;
    await this.hooks.emit(
      "collector.offline",
      `${collectorId}/${lastSeen}`,
      { collectorId, name: collector.name, lastSeen, offlineMinutes: this.offlineMs / 60_000 },
      { notBefore: this.now() + this.offlineMs, check: { kind: "stillOffline", collectorId, lastSeen } },
    );
  }
}
