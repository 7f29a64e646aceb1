/**
 * Which collectors an operator should look at for their config, read from
 * the targets and render failures (docs/architecture.md "Status model"), as
 * the in-memory index holds them (target-index.ts): the dashboard's lists,
 * the drifted list, and the collector list's attention filter and reasons,
 * all judged alike, none reading the store.
 */
import type { ConfigReason } from "../../shared/attention.ts";
import type { Collector } from "../../shared/collectors.ts";
import type { Collectors } from "../collectors/collectors.ts";
import { rolloutState, type CollectorConfig } from "./records.ts";
import type { TargetIndex } from "./target-index.ts";

/** A collector that drifted: online, current, running something other than its target. */
export interface DriftedCollector {
  collectorId: string;
  name: string;
  reason: string | null;
  checkedAt: string;
}

/** The collectors to look at, by reason, each list in id order. */
export interface ConfigAttention {
  failed: { collectorId: string; name: string; error: string | null }[];
  pinned: { collectorId: string; name: string; at: string; actor: string }[];
  drifted: DriftedCollector[];
  unrenderable: { collectorId: string; name: string; error: string }[];
}

/** A list of the dashboard: how many, and the first few by id. */
export interface Listed<T> {
  count: number;
  sample: T[];
}

/** `ConfigAttention` counted, with the first `n` of each list. */
export interface AttentionSummary {
  failed: Listed<ConfigAttention["failed"][number]>;
  pinned: Listed<ConfigAttention["pinned"][number]>;
  drifted: Listed<DriftedCollector>;
  unrenderable: Listed<ConfigAttention["unrenderable"][number]>;
}

export class Attention {
  constructor(
    private readonly index: Pick<TargetIndex, "targetLookup" | "failureOf" | "attentionSets">,
    private readonly collectors: Pick<Collectors, "counters">,
  ) {}

  /** The collectors that run something other than their applied target, in id order: online, current, drifted. */
  async drifted(): Promise<DriftedCollector[]> {
    return (await this.attention()).drifted;
  }

  /**
   * The collectors an operator should look at, each list in id order: their
   * config failed, a rollback pinned them, they drifted (as `drifted`), or
   * their config cannot be rendered (a publish or an attribute change skipped
   * them). Read from the sets kept beside the index (attention-sets.ts), so
   * it costs what it lists, not the fleet.
   */
  async attention(): Promise<ConfigAttention> {
    const summary = await this.summary(Number.POSITIVE_INFINITY);
    return { failed: summary.failed.sample, pinned: summary.pinned.sample, drifted: summary.drifted.sample, unrenderable: summary.unrenderable.sample };
  }

  /** `attention` counted, with only the first `n` of each list built (the dashboard's). */
  async summary(n: number): Promise<AttentionSummary> {
    const [sets, targetOf, failureOf, { lookup }] = await Promise.all([
      this.index.attentionSets(),
      this.index.targetLookup(),
      this.index.failureOf(),
      this.collectors.counters(),
    ]);
    /** The first `n` of `ids` that `entry` answers for, and how many it answers for. */
    const list = <T>(ids: readonly string[], entry: (collector: Collector) => T | undefined): Listed<T> => {
      const out: Listed<T> = { count: 0, sample: [] };
      for (const id of ids) {
        const collector = lookup(id);
        const item = collector && entry(collector);
        if (item === undefined) continue;
        out.count++;
        if (out.sample.length < n) out.sample.push(item);
      }
      return out;
    };
    /** An entry made from the collector's target, none when it has no target. */
    const byTarget =
      <T>(make: (collector: Collector, target: CollectorConfig) => T | undefined) =>
      (collector: Collector): T | undefined => {
        const target = targetOf(collector.id);
        return target && make(collector, target);
      };
    return {
      failed: list(
        sets.failed.values(),
        byTarget((c, t) => (t.state === "failed" ? { collectorId: c.id, name: c.name, error: t.error } : undefined)),
      ),
      pinned: list(
        sets.pinned.values(),
        byTarget((c, t) => (t.pinned ? { collectorId: c.id, name: c.name, ...t.pinned } : undefined)),
      ),
      drifted: list(
        sets.drifted.values(),
        byTarget((c, t) =>
          targetReasons(c, t).includes("drifted")
            ? { collectorId: c.id, name: c.name, reason: t.drift!.reason ?? null, checkedAt: t.drift!.checkedAt }
            : undefined,
        ),
      ),
      unrenderable: list(sets.unrenderable.values(), (c) => {
        const failure = failureOf(c.id);
        return failure && { collectorId: c.id, name: c.name, error: failure.error };
      }),
    };
  }

  /**
   * Why each of these collectors needs attention for its config (one page of
   * the collector list): judged as `attention` judges the fleet, from the
   * same index, so a row and the counts agree.
   */
  async configAttention(collectors: readonly Collector[]): Promise<Map<string, ConfigReason[]>> {
    const [targetOf, failureOf] = await Promise.all([this.index.targetLookup(), this.index.failureOf()]);
    const out = new Map<string, ConfigReason[]>();
    for (const collector of collectors) {
      const target = targetOf(collector.id);
      const reasons = target ? targetReasons(collector, target) : [];
      if (failureOf(collector.id)) reasons.push("unrenderable");
      out.set(collector.id, reasons);
    }
    return out;
  }

  /** The ids of the collectors `attention` lists under one reason. */
  async attentionIds(reason: ConfigReason): Promise<Set<string>> {
    return new Set((await this.attention())[reason].map((c) => c.collectorId));
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
