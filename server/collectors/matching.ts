/**
 * Which pipelines a collector's attributes select: a pipeline with matchers
 * (shared/matchers.ts) applies to every collector whose attributes
 * (./attributes.ts: set, virtual, and reported ones whose key is trusted)
 * satisfy all of them.
 */
import type { Collector } from "../../shared/collectors.ts";
import { attributeValues, type TrustedKeys } from "./attributes.ts";
import { MatcherListError, matches, parseMatcherList, type Matcher } from "../../shared/matchers.ts";
import { ValidationError } from "../errors.ts";
import type { PipelineRecord } from "../../shared/config-records.ts";

/** A pipeline with matchers, parsed once per snapshot. */
export interface MatchedPipeline {
  pipeline: PipelineRecord;
  matchers: Matcher[];
}

/**
 * The snapshot's pipelines that have matchers, parsed. The API checks them on write; one
 * written into the repository by other means that does not parse is a ValidationError
 * naming `pipelines[<id>].matchers[i]`.
 */
export function matcherPipelines(pipelines: ReadonlyMap<string, PipelineRecord>): MatchedPipeline[] {
  return [...pipelines.values()]
    .filter((p) => (p.matchers?.length ?? 0) > 0)
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map((pipeline) => {
      try {
        return { pipeline, matchers: parseMatcherList(pipeline.matchers!, `pipelines[${pipeline.id}].matchers`) };
      } catch (error) {
        if (!(error instanceof MatcherListError)) throw error;
        throw new ValidationError(`Pipeline '${pipeline.id}' has matchers that do not parse: ${error.message}.`, error.details);
      }
    });
}

/** Ids of the pipelines whose matchers all hold for the collector's targeting attributes, in id order. */
export function matchedPipelineIds(collector: Collector, pipelines: readonly MatchedPipeline[], trusted: TrustedKeys): string[] {
  if (pipelines.length === 0) return [];
  const attributes = attributeValues(collector, trusted);
  return pipelines.filter((p) => matches(p.matchers, attributes)).map((p) => p.pipeline.id);
}
