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

export class Attention {
  constructor(
    private readonly index: Pick<TargetIndex, "targetLookup" | "targetsWhere" | "failureLookup" | "allFailures">,
    private readonly collectors: Pick<Collectors, "get">,
  ) {}

  /** The collectors that run something other than their applied target, in id order: online, current, drifted. */
  async drifted(): Promise<DriftedCollector[]> {
    return (await this.attention()).drifted;
  }

  /**
   * The collectors an operator should look at, each list in id order: their
   * config failed, a rollback pinned them, they drifted (as `drifted`), or
   * their config cannot be rendered (a publish or an attribute change skipped
   * them). One pass over the targets in memory.
   */
  async attention(): Promise<ConfigAttention> {
    const out: ConfigAttention = { failed: [], pinned: [], drifted: [], unrenderable: [] };
    const [targets, failures] = await Promise.all([
      this.index.targetsWhere((t) => t.state === "failed" || Boolean(t.pinned) || (t.state === "current" && t.drift?.drifted === true)),
      this.index.allFailures(),
    ]);
    for (const data of targets) {
      const collector = await this.collectors.get(data.collectorId).catch(() => null);
      if (!collector) continue;
      const { collectorId } = data;
      const reasons = targetReasons(collector, data);
      if (reasons.includes("failed")) out.failed.push({ collectorId, name: collector.name, error: data.error });
      if (reasons.includes("pinned")) out.pinned.push({ collectorId, name: collector.name, ...data.pinned! });
      if (reasons.includes("drifted"))
        out.drifted.push({ collectorId, name: collector.name, reason: data.drift!.reason ?? null, checkedAt: data.drift!.checkedAt });
    }
    for (const data of failures) {
      const collector = await this.collectors.get(data.collectorId).catch(() => null);
      if (collector) out.unrenderable.push({ collectorId: data.collectorId, name: collector.name, error: data.error });
    }
    return out;
  }

  /**
   * Why each of these collectors needs attention for its config (one page of
   * the collector list): judged as `attention` judges the fleet, from the
   * same index, so a row and the counts agree.
   */
  async configAttention(collectors: readonly Collector[]): Promise<Map<string, ConfigReason[]>> {
    const [targetOf, unrenderable] = await Promise.all([this.index.targetLookup(), this.index.failureLookup()]);
    const out = new Map<string, ConfigReason[]>();
    for (const collector of collectors) {
      const target = targetOf(collector.id);
      const reasons = target ? targetReasons(collector, target) : [];
      if (unrenderable(collector.id)) reasons.push("unrenderable");
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
