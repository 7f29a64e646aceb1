/**
 * Own metrics (docs/architecture.md, "Own metrics"): the `/v1/metrics` intake and the throughput it
 * yields per collector, per component, per route and per pipeline flow, now
 * and over the last hour. All in memory and per process; after a restart
 * rates return with the collectors' next pushes.
 */
import type { Collector } from "../../shared/collectors.ts";
import type { Collectors } from "../collectors/collectors.ts";
import type { ConfigStore } from "../configstore/configstore.ts";
import { BoundedMap } from "../lib/bounded-map.ts";
import type { Delivery } from "../rollout/delivery.ts";
import { STEP_MS, type HistoryAnswer } from "./history.ts";
import { collectorFlows, flowRates, type CollectorFlows, type PipelineRate, type RouteRate } from "./routes.ts";
import { ThroughputWindow, type CollectorRates, type WindowLimits } from "./window.ts";

export interface Throughput extends CollectorRates {
  routes: RouteRate[];
  pipelines: PipelineRate[];
}

/** Planned flows per collector and target; planning is cheap but not free. */
const FLOW_CACHE_LIMIT = 1000;

const NO_HISTORY: HistoryAnswer = { step: STEP_MS / 1000, times: [], signals: [], process: { cpu: [], memoryRss: [] } };

type Deps = { collectors: Collectors; delivery: Pick<Delivery, "target">; configStore: ConfigStore };

export class Telemetry {
  readonly window: ThroughputWindow;
  private readonly flowCache = new BoundedMap<string, CollectorFlows>(FLOW_CACHE_LIMIT);

  constructor(limits: WindowLimits = {}) {
    this.window = new ThroughputWindow(limits);
  }

  /** The collector's rates; throws NotFoundError for an unknown collector. */
  async throughput(deps: Deps, collectorId: string): Promise<Throughput> {
    const collector = await deps.collectors.get(collectorId);
    const rates = this.window.rates(collectorId) ?? {
      window: 0,
      components: [],
      process: { cpu: null, memoryRss: null, uptime: null },
      lastReportAt: null,
    };
    const planned = await this.flowsOf(deps, collector);
    if (!planned) return { ...rates, routes: [], pipelines: [] };
    return { ...rates, ...flowRates(planned.flows, rates.components) };
  }

  /** The collector's flows as planned at its published target, and that target's commit; null when nothing is published for it. */
  async flowsOf(deps: Pick<Deps, "collectors" | "delivery" | "configStore">, collector: Collector): Promise<{ flows: CollectorFlows; commit: string } | null> {
    const target = await deps.delivery.target(collector.id);
    if (!target) return null;
    const commit = target.target.targetCommit;
    // The rendered hash changes with the attributes that pick matched pipelines, so it keys the plan too.
    const key = `${collector.id} ${commit} ${target.rendered.hash}`;
    let flows = this.flowCache.get(key);
    if (!flows) {
      flows = collectorFlows(await deps.configStore.snapshotAt(commit), collector, deps.collectors.trust.keys());
      this.flowCache.set(key, flows);
    }
    return { flows, commit };
  }

  /** The collector's last hour in 15 s buckets; throws NotFoundError for an unknown collector. */
  async history(deps: Pick<Deps, "collectors">, collectorId: string): Promise<HistoryAnswer> {
    await deps.collectors.get(collectorId);
    return this.window.history(collectorId) ?? NO_HISTORY;
  }
}
