/**
 * One pipeline rendered on its own, for `POST /pipelines/{id}/topology/preview`
 * without a collector: no overrides; a source node without ref is a default
 * OTLP receiver and a destination node without ref a debug exporter (on Alloy,
 * where that exporter is not generally available, the node is left unwired),
 * and the output says so in a comment. Runtime O writes the names and keys of
 * the collector version given, as for a collector reporting it (otelcol.ts),
 * and the header names that version; without one, the form every supported
 * version accepts. On Alloy, the differences of its sources' data from
 * Runtime O's go with it (differences.ts).
 */
import type { Runtime } from "../../shared/vocabulary.ts";
import type { DestinationRecord, PipelineRecord, SourceRecord } from "../../shared/config-records.ts";
import { parseCollectorVersion } from "../catalog/versions.ts";
import { renderAlloyPlan } from "./alloy.ts";
import { renderOtelcolPlan } from "./otelcol.ts";
import { planPreview } from "./plan.ts";
import { runtimeDifferences } from "./differences.ts";
import type { RuntimeDifference } from "../../shared/rollouts.ts";

export function renderPipelinePreview(
  pipeline: PipelineRecord,
  sources: ReadonlyMap<string, SourceRecord>,
  destinations: ReadonlyMap<string, DestinationRecord>,
  runtime: Runtime,
  version?: string,
): string {
  const plan = planPreview(pipeline, sources, destinations, runtime);
  const header = [`Preview of pipeline ${pipeline.id} (${pipeline.signal})${version ? ` for ${runtime} ${version}` : ""}; not saved or delivered.`];
  return runtime === "alloy" ? renderAlloyPlan(plan, header) : renderOtelcolPlan(plan, header, { version: parseCollectorVersion(version) });
}

/** The parity warnings of a pipeline previewed on its own: its source nodes' types (a node without ref is the OTLP stand-in). */
export function pipelinePreviewDifferences(pipeline: PipelineRecord, sources: ReadonlyMap<string, SourceRecord>, runtime: Runtime): RuntimeDifference[] {
  const types = pipeline.topology.nodes.flatMap((n) => {
    const type = n.kind === "source" && n.ref !== undefined ? sources.get(n.ref)?.type : undefined;
    return type === undefined ? [] : [type];
  });
  return runtimeDifferences(runtime, types);
}
