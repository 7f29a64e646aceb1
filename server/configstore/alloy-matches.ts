/**
 * Pipelines with matchers that an Alloy collector cannot run: a referenced
 * source whose data it would filter or transform differently than the
 * OpenTelemetry Collector does (render/parity.ts), or a referenced source or
 * destination Alloy has no component for. A pipeline write that would select an Alloy
 * collector is refused (configstore/pipelines.ts); so is a collector edit
 * (tags, environment, mode, name) that would make an Alloy collector match one.
 */
import type { Collector } from "../../shared/collectors.ts";
import { RUNTIME_OF } from "../../shared/vocabulary.ts";
import { findType, runtimeProblem } from "../catalog/index.ts";
import type { Snapshot } from "./layout.ts";
import type { ErrorDetail } from "../errors.ts";
import { routeRuntimeRProblems } from "../render/parity.ts";
import { matchedPipelineIds, matcherPipelines, type MatchedPipeline } from "../collectors/matching.ts";
import type { TrustedKeys } from "../collectors/attributes.ts";

/** A pipeline with matchers and why Alloy cannot run it (each problem's message names the pipeline or record). */
export interface AlloyUnrunnable {
  selects: MatchedPipeline;
  problems: string[];
}

/** The snapshot's pipelines with matchers that Alloy cannot run, in id order. */
export function alloyUnrunnable(snapshot: Pick<Snapshot, "pipelines" | "sources" | "destinations">): AlloyUnrunnable[] {
  return matcherPipelines(snapshot.pipelines).flatMap((selects) => {
    const { pipeline } = selects;
    const refs = (kind: "source" | "destination") =>
      [...new Set(pipeline.topology.nodes.flatMap((n) => (n.kind === kind && n.ref !== undefined ? [n.ref] : [])))].sort();
    const problems = [
      ...refs("source").flatMap((id) => {
        const source = snapshot.sources.get(id);
        if (!source) return [];
        const type = findType("source", source.type);
        const problem = type && runtimeProblem(type, "alloy");
        if (problem) return [`pipeline "${pipeline.name}" reads source "${source.name}" (${source.type}), which Alloy cannot run: ${problem}`];
        return routeRuntimeRProblems(source, pipeline).map((p) => p.message);
      }),
      ...refs("destination").flatMap((id) => {
        const record = snapshot.destinations.get(id);
        const type = record && findType("destination", record.type);
        const problem = type && runtimeProblem(type, "alloy");
        return problem ? [`pipeline "${pipeline.name}" sends to destination "${record.name}" (${record.type}), which Alloy cannot run: ${problem}`] : [];
      }),
    ];
    return problems.length > 0 ? [{ selects, problems }] : [];
  });
}

/**
 * One detail per edited collector that is an Alloy collector after the edit
 * and would then match an unrunnable pipeline it did not match as an Alloy
 * collector before (`before` null: it is new). Path `collectors/<id>`.
 */
export function alloyMatchProblems(
  unrunnable: readonly AlloyUnrunnable[],
  edits: readonly { before: Collector | null; after: Collector }[],
  trusted: TrustedKeys,
): ErrorDetail[] {
  if (unrunnable.length === 0) return [];
  const pipelines = unrunnable.map((u) => u.selects);
  const alloyMatches = (collector: Collector | null) =>
    collector && RUNTIME_OF[collector.managementMode] === "alloy" ? new Set(matchedPipelineIds(collector, pipelines, trusted)) : new Set<string>();
  const details: ErrorDetail[] = [];
  for (const { before, after } of edits) {
    const was = alloyMatches(before);
    for (const id of alloyMatches(after)) {
      if (was.has(id)) continue;
      const { selects, problems } = unrunnable.find((u) => u.selects.pipeline.id === id)!;
      details.push({
        path: `collectors/${after.id}`,
        message: `Alloy collector ${after.name} (${after.id}) would match pipeline "${selects.pipeline.name}" (${id}), which it cannot run: ${problems[0]}`,
      });
    }
  }
  return details;
}
