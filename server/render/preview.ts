/**
 * One pipeline rendered on its own, for `POST /pipelines/{id}/topology/preview`
 * without a collector: no overrides; a source node without ref is a default
 * OTLP receiver and a destination node without ref a debug exporter (on Alloy,
 * where that exporter is not generally available, the node is left unwired),
 * and the output says so in a comment. Runtime O writes the names and keys of
 * the collector version given, as for a collector reporting it (otelcol.ts),
 * and the header names that version; without one, the form every supported
 * version accepts.
 */
import type { Runtime } from "../../shared/vocabulary.ts";
import type { DestinationRecord, PipelineRecord, SourceRecord } from "../../shared/config-records.ts";
import { parseCollectorVersion } from "../catalog/versions.ts";
import { renderAlloyPlan } from "./alloy.ts";
import { renderOtelcolPlan } from "./otelcol.ts";
import { planPreview } from "./plan.ts";

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
