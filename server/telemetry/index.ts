/**
 * Own metrics (docs/architecture.md, "Own metrics"): the `/v1/metrics` intake and the throughput it
 * yields per collector, per component and per route. All in memory and per
 * process; after a restart rates return with the collectors' next pushes.
 */
import type { Collectors } from "../collectors/collectors.ts";
import type { CollectorTokens } from "../collectors/tokens.ts";
import type { ConfigStore } from "../configstore/configstore.ts";
import type { Rollouts } from "../rollout/rollout.ts";
import type { Flow } from "../render/plan.ts";
import { MetricsChannel } from "./channel.ts";
import { flowsOfRoutes, routeRates, type RouteRate } from "./routes.ts";
import { ThroughputWindow, type CollectorRates, type WindowLimits } from "./window.ts";

export interface Throughput extends CollectorRates {
  routes: RouteRate[];
}

/** Planned flows per collector and target commit; planning is cheap but not free. */
const FLOW_CACHE_LIMIT = 1000;

export class Telemetry {
  readonly window: ThroughputWindow;
  private readonly flowCache = new Map<string, { routeIds: string[]; flows: Map<string, Flow> }>();

  constructor(limits: WindowLimits = {}) {
    this.window = new ThroughputWindow(limits);
  }

  channel(deps: { collectorTokens: CollectorTokens }): MetricsChannel {
    return new MetricsChannel(deps, this.window);
  }

  /** The collector's rates; throws NotFoundError for an unknown collector. */
  async throughput(deps: { collectors: Collectors; rollouts: Rollouts; configStore: ConfigStore }, collectorId: string): Promise<Throughput> {
    const collector = await deps.collectors.get(collectorId);
    const rates = this.window.rates(collectorId) ?? {
      window: 0,
      components: [],
      process: { cpu: null, memoryRss: null, uptime: null },
      lastReportAt: null,
    };
    const target = await deps.rollouts.target(collectorId);
    if (!target) return { ...rates, routes: [] };
    const key = `${collectorId} ${target.target.targetCommit}`;
    let mapped = this.flowCache.get(key);
    if (!mapped) {
      const snapshot = await deps.configStore.snapshotAt(target.target.targetCommit);
      const routeIds = [...snapshot.routes.values()].filter((r) => r.collectorId === collectorId).map((r) => r.id);
      mapped = { routeIds, flows: flowsOfRoutes(snapshot, { id: collector.id, name: collector.name }) };
      if (this.flowCache.size >= FLOW_CACHE_LIMIT) this.flowCache.delete(this.flowCache.keys().next().value!);
      this.flowCache.set(key, mapped);
    }
    return { ...rates, routes: routeRates(mapped.routeIds, mapped.flows, rates.components) };
  }
}
