/**
 * Per-flow rates from per-component ones. The rendered config gives each
 * (pipeline, source) flow its own processors, `<type>/<flow>_<node>`, while
 * receivers and exporters are shared (server/render/plan.ts). A flow comes
 * from a route or from the collector matching the pipeline's matchers, so
 * the collector's current target is planned again from its snapshot with the
 * pipelines its attributes match (as server/rollout/renderer.ts renders it),
 * each flow is known by the (source, pipeline) it joins, and:
 *
 * - `in`  = incoming items of the flow's entry processor (the largest, when the
 *   graph fans out at the source: every branch gets a copy of the same records);
 * - `out` = outgoing items of the processors that lead to a destination,
 *   summed (a fan-out delivers a copy per branch).
 *
 * A flow without processors can only be measured at its receiver, and only
 * when no other flow of the same signal shares that receiver; otherwise (and
 * when the collector has no published target, or its plan cannot be made)
 * the rates are null.
 */
import type { Collector } from "../../shared/collectors.ts";
import type { Snapshot } from "../configstore/layout.ts";
import { matchedPipelineIds, matcherPipelines } from "../collectors/matching.ts";
import type { TrustedKeys } from "../collectors/attributes.ts";
import { planCollector, type Flow } from "../render/plan.ts";
import type { ComponentRate } from "./window.ts";

export interface RouteRate {
  routeId: string;
  in: number | null;
  out: number | null;
}

export interface PipelineRate {
  pipelineId: string;
  sourceId: string;
  via: "route" | "matchers";
  routeId?: string;
  in: number | null;
  out: number | null;
}

/** A planned flow and what put it on the collector. */
export interface MappedFlow {
  flow: Flow;
  routeId?: string;
}

export interface CollectorFlows {
  /** The collector's routes in the snapshot, whether or not the plan has them. */
  routeIds: string[];
  /** Every flow of the collector's plan; empty when the plan cannot be made. */
  flows: MappedFlow[];
}

const joinKey = (sourceId: string, pipelineId: string) => `${sourceId} ${pipelineId}`;
const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** The collector's flows in its plan of `snapshot`, with the pipelines its attributes match. */
export function collectorFlows(snapshot: Snapshot, collector: Collector, trusted: TrustedKeys): CollectorFlows {
  const routes = [...snapshot.routes.values()].filter((r) => r.collectorId === collector.id);
  const routeIds = routes.map((r) => r.id);
  let flows: Flow[];
  try {
    const matched = matchedPipelineIds(collector, matcherPipelines(snapshot.pipelines), trusted);
    if (routes.length === 0 && matched.length === 0) return { routeIds, flows: [] };
    flows = planCollector({
      collector,
      sources: snapshot.sources,
      destinations: snapshot.destinations,
      pipelines: snapshot.pipelines,
      activations: snapshot.activations.get(collector.id) ?? { collectorId: collector.id, sources: [], destinations: [] },
      routes,
      matched,
    }).flows;
  } catch {
    return { routeIds, flows: [] };
  }
  // The plan makes one flow per join; a route of the same join as a matched pipeline is that flow.
  const routeOf = new Map(routes.map((r) => [joinKey(r.sourceId, r.pipelineId), r.id]));
  return { routeIds, flows: flows.map((flow) => ({ flow, routeId: routeOf.get(joinKey(flow.sourceId, flow.pipelineId)) })) };
}

/** `filter/logs_nginx_drop` → `logs_nginx_drop`: the planned name inside a component id. */
const nameOf = (id: string) => id.slice(id.indexOf("/") + 1);

/** Rates per route (as before) and per flow, from the collector's component rates. */
export function flowRates(mapped: CollectorFlows, components: readonly ComponentRate[]): { routes: RouteRate[]; pipelines: PipelineRate[] } {
  const processors = new Map<string, ComponentRate>();
  const receivers = new Map<string, ComponentRate>();
  for (const c of components) {
    if (c.kind === "processor") processors.set(`${c.signal} ${nameOf(c.id)}`, c);
    else if (c.kind === "receiver") receivers.set(`${c.signal} ${nameOf(c.id)}`, c);
  }
  const flowsPerReceiver = new Map<string, number>();
  for (const { flow: f } of mapped.flows) flowsPerReceiver.set(`${f.signal} ${f.source}`, (flowsPerReceiver.get(`${f.signal} ${f.source}`) ?? 0) + 1);

  const known = (values: (number | null | undefined)[]): number[] | null =>
    values.length === 0 || values.some((v) => v === null || v === undefined) ? null : (values as number[]);
  const sum = (values: (number | null | undefined)[]) => known(values)?.reduce((a, b) => a + b, 0) ?? null;
  const max = (values: (number | null | undefined)[]) => {
    const k = known(values);
    return k === null ? null : Math.max(...k);
  };

  const rateOf = (flow: Flow): { in: number | null; out: number | null } => {
    if (flow.processors.length === 0) {
      const key = `${flow.signal} ${flow.source}`;
      const receiver = flowsPerReceiver.get(key) === 1 ? receivers.get(key) : undefined;
      return { in: receiver?.out ?? null, out: receiver?.out ?? null };
    }
    const entry = flow.entry.filter((t) => t.kind === "processor");
    const terminal = flow.processors.filter((p) => p.next.some((t) => t.kind === "destination"));
    // A source wired straight to a destination beside its processors adds receiver output that cannot be told apart.
    const direct = flow.entry.some((t) => t.kind === "destination");
    return {
      in: direct ? null : max(entry.map((t) => processors.get(`${flow.signal} ${t.name}`)?.in)),
      out: direct ? null : sum(terminal.map((p) => processors.get(`${flow.signal} ${p.name}`)?.out)),
    };
  };

  const pipelines = mapped.flows
    .map(({ flow, routeId }): PipelineRate => ({
      pipelineId: flow.pipelineId,
      sourceId: flow.sourceId,
      ...(routeId === undefined ? { via: "matchers" } : { via: "route", routeId }),
      ...rateOf(flow),
    }))
    .sort((a, b) => compare(a.pipelineId, b.pipelineId) || compare(a.sourceId, b.sourceId));
  const byRoute = new Map(pipelines.flatMap((p) => (p.routeId === undefined ? [] : [[p.routeId, p] as const])));
  const routes = [...mapped.routeIds].sort(compare).map((routeId): RouteRate => {
    const p = byRoute.get(routeId);
    return { routeId, in: p?.in ?? null, out: p?.out ?? null };
  });
  return { routes, pipelines };
}
