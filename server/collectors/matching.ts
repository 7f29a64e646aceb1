/**
 * Which pipelines a collector's attributes select: a pipeline with matchers
 * (shared/matchers.ts) applies to every collector whose attributes
 * (./attributes.ts) satisfy all of them.
 */
import type { Collector } from "../../shared/collectors.ts";
import { attributeValues } from "./attributes.ts";
import { matches, parseMatcherList, type Matcher } from "../../shared/matchers.ts";
import type { PipelineRecord } from "../../shared/config-records.ts";

/** A pipeline with matchers, parsed once per snapshot. */
export interface MatchedPipeline {
  pipeline: PipelineRecord;
  matchers: Matcher[];
}

/** The snapshot's pipelines that have matchers, parsed (stored ones were checked on write). */
export function matcherPipelines(pipelines: ReadonlyMap<string, PipelineRecord>): MatchedPipeline[] {
  return [...pipelines.values()]
    .filter((p) => (p.matchers?.length ?? 0) > 0)
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map((pipeline) => ({ pipeline, matchers: parseMatcherList(pipeline.matchers!, `pipelines[${pipeline.id}].matchers`) }));
}

/** Ids of the pipelines whose matchers all hold for the collector's attributes, in id order. */
export function matchedPipelineIds(collector: Collector, pipelines: readonly MatchedPipeline[]): string[] {
  if (pipelines.length === 0) return [];
  const attributes = attributeValues(collector);
  return pipelines.filter((p) => matches(p.matchers, attributes)).map((p) => p.pipeline.id);
}
