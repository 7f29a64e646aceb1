/**
 * Live rates of one pipeline's nodes, for the editor's canvas: per node,
 * records/s in and out and errors/s from the collectors' own metrics (a
 * processor that counts nothing of its own, batch, by what reached it:
 * server/telemetry/routes.ts FlowComponents), for
 * one collector or summed over the first RATES_COLLECTOR_LIMIT collectors
 * the pipeline applies to (by its matchers or a route). Each collector's
 * published target is planned (Telemetry.flowsOf, cached per target, as the collector's throughput is), which
 * names the components that run each node: processors by their planned
 * name, a source node by its receiver (shared with other flows of the same
 * source, so it counts them too), a destination node by the exporters it
 * stands for (shared likewise with every flow sending there).
 */
import type { Collector } from "../../shared/collectors.ts";
import type { PipelineRates } from "../../shared/pipelines.ts";
import { matchedPipelineIds, matcherPipelines } from "../collectors/matching.ts";
import type { TrustedKeys } from "../collectors/attributes.ts";
import type { Snapshot } from "../configstore/layout.ts";
import { FlowComponents } from "../telemetry/routes.ts";
import type { ThroughputApiDeps } from "./throughput.ts";

export const RATES_COLLECTOR_LIMIT = 50;

type Sum = { in: number | null; out: number | null; errors: number | null };
const add = (a: number | null, b: number | null | undefined) => (b === null || b === undefined ? a : (a ?? 0) + b);

/** The collectors a pipeline applies to in `snapshot`, by its matchers or a route naming it. */
export function appliedCollectors(snapshot: Snapshot, pipelineId: string, collectors: readonly Collector[], trusted: TrustedKeys): Collector[] {
  const routed = new Set([...snapshot.routes.values()].filter((r) => r.pipelineId === pipelineId).map((r) => r.collectorId));
  const matchers = matcherPipelines(snapshot.pipelines);
  return collectors.filter((c) => routed.has(c.id) || matchedPipelineIds(c, matchers, trusted).includes(pipelineId));
}

export async function pipelineRates(deps: ThroughputApiDeps, pipelineId: string, collectorId?: string): Promise<PipelineRates> {
  const worktree = await deps.configStore.worktree();
  const applied = appliedCollectors(worktree, pipelineId, await deps.collectors.all(), deps.collectors.trust.keys());
  const all = collectorId ? [await deps.collectors.get(collectorId)] : applied;
  const chosen = all.slice(0, RATES_COLLECTOR_LIMIT);
  const sums = new Map<string, Sum>();
  const bump = (nodeId: string, rate: Partial<Sum>) => {
    const s = sums.get(nodeId) ?? { in: null, out: null, errors: null };
    sums.set(nodeId, { in: add(s.in, rate.in), out: add(s.out, rate.out), errors: add(s.errors, rate.errors) });
  };
  for (const collector of chosen) {
    const planned = await deps.telemetry.flowsOf(deps, collector);
    if (!planned) continue;
    const components = deps.telemetry.window.rates(collector.id)?.components ?? [];
    const snapshot = await deps.configStore.snapshotAt(planned.commit);
    const byName = new Map(components.map((c) => [`${c.kind} ${c.signal} ${c.id.slice(c.id.indexOf("/") + 1)}`, c]));
    const pipeline = snapshot.pipelines.get(pipelineId);
    /** Each destination node's exporters, once per collector however many of its flows send there. */
    const exporters = new Map<string, Set<string>>();
    const lookup = new FlowComponents(planned.flows.flows, components);
    for (const { flow } of planned.flows.flows) {
      if (flow.pipelineId !== pipelineId) continue;
      for (const t of [...flow.entry, ...flow.processors.flatMap((p) => p.next)]) {
        if (t.kind === "destination" && t.nodeId !== undefined)
          exporters.set(t.nodeId, (exporters.get(t.nodeId) ?? new Set()).add(`exporter ${flow.signal} ${t.name}`));
      }
      const processors = lookup.processorRates(flow);
      for (const p of flow.processors) {
        const rate = processors.get(p.name);
        if (rate) bump(p.nodeId, rate);
      }
      const receiver = byName.get(`receiver ${flow.signal} ${flow.source}`);
      for (const node of pipeline?.topology.nodes ?? []) {
        if (receiver && node.kind === "source" && (node.ref === undefined || node.ref === flow.sourceId))
          bump(node.id, { in: receiver.in, out: receiver.out, errors: receiver.errors });
      }
    }
    for (const [nodeId, names] of exporters) {
      for (const name of names) {
        const exporter = byName.get(name);
        if (exporter) bump(nodeId, { in: exporter.in, out: exporter.out, errors: exporter.errors });
      }
    }
  }
  const choices = applied.slice(0, RATES_COLLECTOR_LIMIT).map((c) => ({ id: c.id, name: c.name }));
  return { collectors: chosen.length, applied: applied.length, choices, nodes: [...sums].map(([nodeId, s]) => ({ nodeId, ...s })) };
}
