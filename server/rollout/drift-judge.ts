/**
 * Judges whether a collector runs what it was given (drift.ts) and keeps the
 * answer on its target: asked when it reports an effective config and when
 * its target turns current (the two may come in either order). Judged one
 * collector at a time, in a worker (drift-isolated.ts), so reports never
 * hold the event loop, and a collector asked for several times meanwhile is
 * judged once, on what is stored then.
 */
import type { Logger } from "pino";
import type { Coalescer } from "../store/coalesce.ts";
import type { Store } from "../store/store.ts";
import type { Delivery } from "./delivery.ts";
import type { Drift } from "./drift.ts";
import { configDriftIsolated } from "./drift-isolated.ts";
import type { EffectiveIntakeGate } from "./effective-intake.ts";
import { EFFECTIVE, type CollectorConfig, type EffectiveConfig, type TargetDrift } from "./records.ts";

export class DriftJudge {
  /** Collectors whose drift is to be judged again, each once however often asked meanwhile. */
  private readonly due = new Set<string>();
  private judging: Promise<void> | null = null;

  constructor(
    private readonly store: Pick<Store, "get">,
    /** Where the answer is written: the targets' writes, shared with delivery. */
    private readonly configWrites: Pick<Coalescer<CollectorConfig>, "update">,
    private readonly delivery: Pick<Delivery, "target">,
    private readonly intake: Pick<EffectiveIntakeGate, "pending">,
    private readonly log: Logger,
  ) {}

  /** Judges the collector's drift again, soon. */
  schedule(collectorId: string): void {
    this.due.add(collectorId);
    this.judging ??= this.judgeDue();
  }

  /** Forgets what is due and waits for the judgement in flight. */
  async close(): Promise<void> {
    this.due.clear();
    await this.judging;
  }

  private async judgeDue(): Promise<void> {
    try {
      // A Set visits what is added while it is walked.
      for (const collectorId of this.due) {
        this.due.delete(collectorId);
        await this.check(collectorId).catch((error: unknown) => this.log.error({ err: error, collectorId }, "the drift check failed"));
      }
    } finally {
      this.judging = null;
    }
  }

  /** Compares what the collector says it runs with its target (drift.ts) and keeps the answer on the target when it changed. */
  private async check(collectorId: string): Promise<void> {
    // The effective config first: a collector that reports none needs no read of its rendered body.
    const effective = (await this.store.get<EffectiveConfig>(EFFECTIVE, collectorId))?.data;
    if (!effective) return;
    const current = await this.delivery.target(collectorId);
    if (!current) return;
    const unknown = this.unknown(collectorId, effective);
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
  private unknown(collectorId: string, effective: EffectiveConfig): Drift | null {
    if (this.intake.pending(collectorId)) {
      return {
        drifted: false,
        diff: null,
        reason: "the collector reported a newer effective config, not read yet (over its report rate); drift is judged when it is",
      };
    }
    if (effective.refused && effective.refused.at >= effective.reportedAt) {
      return { drifted: false, diff: null, reason: "the collector's last effective config was too large to keep; drift is not known" };
    }
    return null;
  }
}
