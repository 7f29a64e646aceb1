/**
 * The pipeline editor's preview for one collector, rendered by publish's own
 * renderer (renderer.ts fleetRenderer) over the working tree with the edited
 * graph in place: its runtime, reported version and attribute values, so the
 * bytes are those the collector is delivered once this is committed and
 * published (secrets stay their markers; only delivery fills them in). It
 * says whether the collector runs the pipeline at all: when neither a route
 * nor its matchers join them, the config is the collector's without it.
 */
import type { Collector } from "../../shared/collectors.ts";
import type { PipelineRecord } from "../../shared/config-records.ts";
import type { PipelinePreview } from "../../shared/pipelines.ts";
import type { Snapshot } from "../configstore/layout.ts";
import type { TrustedKeys } from "../collectors/attributes.ts";
import { matchedPipelineIds, matcherPipelines } from "../collectors/matching.ts";
import { reportedVersion } from "../collectors/runtime.ts";
import { fleetRenderer, renderedSourceTypes } from "./renderer.ts";
import { runtimeDifferences } from "../render/differences.ts";

export function previewForCollector(snapshot: Snapshot, pipeline: PipelineRecord, collector: Collector, trusted: TrustedKeys): PipelinePreview {
  const edited: Snapshot = { ...snapshot, pipelines: new Map(snapshot.pipelines).set(pipeline.id, pipeline) };
  const config = fleetRenderer(edited, () => trusted)(collector);
  const routed = [...edited.routes.values()].some((r) => r.collectorId === collector.id && r.pipelineId === pipeline.id);
  const matched = matchedPipelineIds(collector, matcherPipelines(edited.pipelines), trusted).includes(pipeline.id);
  return {
    config: config.body,
    renderedFor: {
      runtime: config.runtime,
      version: reportedVersion(collector),
      versionFrom: "reported",
      collector: { id: collector.id, name: collector.name, routed, matched },
    },
    differences: runtimeDifferences(config.runtime, renderedSourceTypes(config)),
  };
}
