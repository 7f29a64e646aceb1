/**
 * Runtime R: Grafana Alloy configuration. One block (or chain of blocks) per
 * component, wired by `output` blocks and `forward_to` lists, so the
 * pipeline graph stays a true DAG with nothing duplicated. Blocks come in a
 * stable order (sources, then each flow's processors, then destinations,
 * each by name), so equal input renders to equal bytes.
 */
import { SIGNALS, type Signal } from "../../shared/config-records.ts";
import type { CollectorConfigInput } from "../catalog/render-input.ts";
import { attr, block, encodeAlloy, ref, withComments, type AlloyBlock, type AlloyRef } from "../catalog/alloy-syntax.ts";
import { assertRuntimeRParity } from "./parity.ts";
import { planCollector, type Plan, type Target } from "./plan.ts";
import { RUNTIME_NAMES } from "../../shared/vocabulary.ts";

/** The collector's full configuration; a source or destination Alloy cannot run is refused by the plan; `plan`: the input's, when already made. */
export function renderAlloy(input: CollectorConfigInput, plan: Plan = planCollector(input, "alloy")): string {
  return renderAlloyPlan(plan, ["Rendered by svc; delivered by remote configuration, local edits are replaced."]);
}

export function renderAlloyPlan(plan: Plan, header: readonly string[]): string {
  const document = alloyDocument(plan, header);
  return encodeAlloy(document.blocks, document.header);
}

/** The block model of a rendered config, before encoding: what tests hold against upstream's Arguments. */
export interface AlloyDocument {
  blocks: AlloyBlock[];
  header: string[];
}

/**
 * A destination without a Runtime R form (only a preview's stand-in reaches
 * here) gets no block: what would feed it is left unwired, and its comments
 * move to the header. Throws ValidationError when a flow's processors read a
 * field Alloy delivers differently for its source (parity.ts).
 */
export function alloyDocument(plan: Plan, header: readonly string[]): AlloyDocument {
  assertRuntimeRParity(plan);
  const inputs = new Map<string, AlloyRef>();
  const unwired: string[] = [];
  for (const d of plan.destinations) {
    if (d.type.alloyEntry === undefined) unwired.push(...d.comments);
    else inputs.set(`destination/${d.name}`, ref(`${d.type.alloyEntry}.${d.name}.input`));
  }
  for (const f of plan.flows) {
    for (const p of f.processors) inputs.set(`processor/${p.name}`, ref(`${p.type.alloyEntry}.${p.name}.input`));
  }
  const refs = (targets: readonly Target[]) => targets.flatMap((t) => inputs.get(`${t.kind}/${t.name}`) ?? []);

  const blocks: AlloyBlock[] = [];
  for (const s of plan.sources) {
    const outputs = new Map<Signal, AlloyRef[]>();
    for (const f of plan.flows) {
      if (f.source === s.name) outputs.set(f.signal, [...(outputs.get(f.signal) ?? []), ...refs(f.entry)]);
    }
    // The plan refuses a source without a Runtime R form for an Alloy render.
    if (s.type.alloy === undefined) throw new Error(`source type '${s.type.type}' has no ${RUNTIME_NAMES.alloy} form`);
    const chain = s.type.alloy(s.config as never, s.name, output(outputs));
    blocks.push(withComments(chain[0]!, s.comments), ...chain.slice(1));
  }
  for (const f of plan.flows) {
    for (const p of f.processors) {
      blocks.push(p.type.alloy(p.config as never, p.name, f.signal, output(new Map([[f.signal, refs(p.next)]]))));
    }
  }
  for (const d of plan.destinations) {
    if (d.type.alloy === undefined) continue;
    const chain = d.type.alloy(d.config as never, d.name);
    blocks.push(withComments(chain[0]!, d.comments), ...chain.slice(1));
  }
  const idle = plan.flows.length === 0 ? ["No routes: nothing to collect."] : [];
  return { blocks, header: [...header, ...idle, ...unwired] };
}

/** `output { logs = [...] metrics = [...] }` with the signals in a fixed order. */
function output(targets: ReadonlyMap<Signal, AlloyRef[]>): AlloyBlock {
  return block(
    "output",
    undefined,
    SIGNALS.filter((signal) => (targets.get(signal) ?? []).length > 0).map((signal) => attr(signal, targets.get(signal)!)),
  );
}
