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
 * the rates are null. A processor that counts nothing of its own but passes
 * every record on (names.ts PASS_THROUGH_PROCESSORS: batch) is measured by
 * what reached it: the outgoing items of the processors before it, and the
 * receiver's accepted items when it is first and the receiver is the flow's
 * alone.
 */
import type { Collector } from "../../shared/collectors.ts";
import type { Snapshot } from "../configstore/layout.ts";
import { matchedPipelineIds, matcherPipelines } from "../collectors/matching.ts";
import type { TrustedKeys } from "../collectors/attributes.ts";
import { planCollector, type Flow, type Target } from "../render/plan.ts";
import { PASS_THROUGH_PROCESSORS } from "./names.ts";
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

/** A node's records/s in and out and errors/s; null where nothing measures it. */
export type NodeRate = { in: number | null; out: number | null; errors: number | null };

const known = (values: (number | null | undefined)[]): number[] | null =>
  values.length === 0 || values.some((v) => v === null || v === undefined) ? null : (values as number[]);
const sum = (values: (number | null | undefined)[]) => known(values)?.reduce((a, b) => a + b, 0) ?? null;
const max = (values: (number | null | undefined)[]) => {
  const k = known(values);
  return k === null ? null : Math.max(...k);
};

/** A collector's component rates looked up the way its flows name them. */
export class FlowComponents {
  private readonly processors = new Map<string, ComponentRate>();
  private readonly receivers = new Map<string, ComponentRate>();
  private readonly flowsPerReceiver = new Map<string, number>();

  constructor(flows: readonly MappedFlow[], components: readonly ComponentRate[]) {
    for (const c of components) {
      if (c.kind === "processor") this.processors.set(`${c.signal} ${nameOf(c.id)}`, c);
      else if (c.kind === "receiver") this.receivers.set(`${c.signal} ${nameOf(c.id)}`, c);
    }
    for (const { flow: f } of flows) this.flowsPerReceiver.set(`${f.signal} ${f.source}`, (this.flowsPerReceiver.get(`${f.signal} ${f.source}`) ?? 0) + 1);
  }

  /** The flow's receiver, when no other flow of its signal shares it (else its counts are not the flow's alone). */
  ownReceiver(flow: Flow): ComponentRate | undefined {
    const key = `${flow.signal} ${flow.source}`;
    return this.flowsPerReceiver.get(key) === 1 ? this.receivers.get(key) : undefined;
  }

  /** Each of the flow's processors' rates by planned name: as reported, or a pass-through one's from what reached it. */
  processorRates(flow: Flow): Map<string, NodeRate> {
    const rates = new Map<string, NodeRate>();
    // Topological order: whatever feeds a processor has its rates before it.
    for (const p of flow.processors) {
      const reported = this.processors.get(`${flow.signal} ${p.name}`);
      if (reported) rates.set(p.name, { in: reported.in, out: reported.out, errors: reported.errors });
      else if (PASS_THROUGH_PROCESSORS.has(p.type.type)) {
        const feeds = (targets: readonly Target[]) => targets.some((t) => t.kind === "processor" && t.name === p.name);
        const inputs = flow.processors.filter((q) => feeds(q.next)).map((q) => rates.get(q.name)?.out);
        if (feeds(flow.entry)) inputs.push(this.ownReceiver(flow)?.out);
        const reached = sum(inputs);
        rates.set(p.name, { in: reached, out: reached, errors: null });
      }
    }
    return rates;
  }
}

/** Rates per route (as before) and per flow, from the collector's component rates. */
export function flowRates(mapped: CollectorFlows, components: readonly ComponentRate[]): { routes: RouteRate[]; pipelines: PipelineRate[] } {
  const lookup = new FlowComponents(mapped.flows, components);

  const rateOf = (flow: Flow): { in: number | null; out: number | null } => {
    if (flow.processors.length === 0) {
      const receiver = lookup.ownReceiver(flow);
      return { in: receiver?.out ?? null, out: receiver?.out ?? null };
    }
    const processors = lookup.processorRates(flow);
    const entry = flow.entry.filter((t) => t.kind === "processor");
    const terminal = flow.processors.filter((p) => p.next.some((t) => t.kind === "destination"));
    // A source wired straight to a destination beside its processors adds receiver output that cannot be told apart.
    const direct = flow.entry.some((t) => t.kind === "destination");
    return {
      in: direct ? null : max(entry.map((t) => processors.get(t.name)?.in)),
      out: direct ? null : sum(terminal.map((p) => processors.get(p.name)?.out)),
    };
  };

  const pipelines = mapped.flows
    .map(
      ({ flow, routeId }): PipelineRate => ({
        pipelineId: flow.pipelineId,
        sourceId: flow.sourceId,
        ...(routeId === undefined ? { via: "matchers" } : { via: "route", routeId }),
        ...rateOf(flow),
      }),
    )
    .sort((a, b) => compare(a.pipelineId, b.pipelineId) || compare(a.sourceId, b.sourceId));
  const byRoute = new Map(pipelines.flatMap((p) => (p.routeId === undefined ? [] : [[p.routeId, p] as const])));
  const routes = [...mapped.routeIds].sort(compare).map((routeId): RouteRate => {
    const p = byRoute.get(routeId);
    return { routeId, in: p?.in ?? null, out: p?.out ?? null };
  });
  return { routes, pipelines };
}
