/**
 * Per-route rates from per-component ones. The rendered config names a
 * route's flow `<pipeline>_<source>` (made unique) and gives each flow its own
 * processors, `<type>/<flow>_<node>`, while receivers and exporters are shared
 * (server/render/plan.ts). So the collector's current target is planned again
 * from its snapshot, each route is matched to its flow by replaying the
 * plan's naming, and:
 *
 * - `in`  = incoming items of the flow's entry processor (the largest, when the
 *   graph fans out at the source: every branch gets a copy of the same records);
 * - `out` = outgoing items of the processors that lead to a destination,
 *   summed (a fan-out delivers a copy per branch).
 *
 * A flow without processors can only be measured at its receiver, and only
 * when no other flow of the same signal shares that receiver; otherwise (and
 * when the collector has no published target, or its plan no longer
 * matches) the route's rates are null.
 */
import type { Snapshot } from "../configstore/layout.ts";
import type { RouteRecord } from "../../shared/config-records.ts";
import { planCollector, type Flow } from "../render/plan.ts";
import { NameTable } from "../render/names.ts";
import type { ComponentRate } from "./window.ts";

export interface RouteRate {
  routeId: string;
  in: number | null;
  out: number | null;
}

const joinKey = (r: RouteRecord) => `${r.sourceId} ${r.pipelineId}`;
const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Route id → its flow in the collector's plan; empty when the plan cannot be made. */
export function flowsOfRoutes(snapshot: Snapshot, collector: { id: string; name: string }): Map<string, Flow> {
  const routes = [...snapshot.routes.values()].filter((r) => r.collectorId === collector.id).sort((a, b) => compare(joinKey(a), joinKey(b)));
  if (routes.length === 0) return new Map();
  let flows: Flow[];
  try {
    flows = planCollector({
      collector,
      sources: snapshot.sources,
      destinations: snapshot.destinations,
      pipelines: snapshot.pipelines,
      activations: snapshot.activations.get(collector.id) ?? { collectorId: collector.id, sources: [], destinations: [] },
      routes,
    }).flows;
  } catch {
    return new Map();
  }
  // The plan's naming, replayed: sources named in source-id order, flows in join order.
  const sourceNames = new NameTable();
  const sourceName = new Map<string, string>();
  for (const id of [...new Set(routes.map((r) => r.sourceId))].sort(compare)) {
    const record = snapshot.sources.get(id);
    if (!record) return new Map();
    sourceName.set(id, sourceNames.claim(record.name, record.id));
  }
  const flowNames = new NameTable();
  const byName = new Map(flows.map((f) => [f.name, f]));
  const result = new Map<string, Flow>();
  for (const route of routes) {
    const pipeline = snapshot.pipelines.get(route.pipelineId);
    if (!pipeline) return new Map();
    const name = flowNames.claim(`${pipeline.name} ${sourceName.get(route.sourceId)}`, joinKey(route));
    const flow = byName.get(name);
    // Guard against the replay drifting from plan.ts: names, sources and signals must agree.
    if (!flow || flow.source !== sourceName.get(route.sourceId) || flow.signal !== pipeline.signal) return new Map();
    result.set(route.id, flow);
  }
  return result;
}

/** `filter/logs_nginx_drop` → `logs_nginx_drop`: the planned name inside a component id. */
const nameOf = (id: string) => id.slice(id.indexOf("/") + 1);

export function routeRates(routeIds: readonly string[], flows: ReadonlyMap<string, Flow>, components: readonly ComponentRate[]): RouteRate[] {
  const processors = new Map<string, ComponentRate>();
  const receivers = new Map<string, ComponentRate>();
  for (const c of components) {
    if (c.kind === "processor") processors.set(`${c.signal} ${nameOf(c.id)}`, c);
    else if (c.kind === "receiver") receivers.set(`${c.signal} ${nameOf(c.id)}`, c);
  }
  const flowsPerReceiver = new Map<string, number>();
  for (const f of flows.values()) flowsPerReceiver.set(`${f.signal} ${f.source}`, (flowsPerReceiver.get(`${f.signal} ${f.source}`) ?? 0) + 1);

  const known = (values: (number | null | undefined)[]): number[] | null =>
    values.length === 0 || values.some((v) => v === null || v === undefined) ? null : (values as number[]);
  const sum = (values: (number | null | undefined)[]) => known(values)?.reduce((a, b) => a + b, 0) ?? null;
  const max = (values: (number | null | undefined)[]) => {
    const k = known(values);
    return k === null ? null : Math.max(...k);
  };

  return [...routeIds].sort(compare).map((routeId): RouteRate => {
    const flow = flows.get(routeId);
    if (!flow) return { routeId, in: null, out: null };
    if (flow.processors.length === 0) {
      const key = `${flow.signal} ${flow.source}`;
      const receiver = flowsPerReceiver.get(key) === 1 ? receivers.get(key) : undefined;
      return { routeId, in: receiver?.out ?? null, out: receiver?.out ?? null };
    }
    const entry = flow.entry.filter((t) => t.kind === "processor");
    const terminal = flow.processors.filter((p) => p.next.some((t) => t.kind === "destination"));
    // A source wired straight to a destination beside its processors adds receiver output that cannot be told apart.
    const direct = flow.entry.some((t) => t.kind === "destination");
    return {
      routeId,
      in: direct ? null : max(entry.map((t) => processors.get(`${flow.signal} ${t.name}`)?.in)),
      out: direct ? null : sum(terminal.map((p) => processors.get(`${flow.signal} ${p.name}`)?.out)),
    };
  });
}
