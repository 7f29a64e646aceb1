/**
 * What the renderers take: one collector's records, gathered and validated by
 * the rollout's renderer. Declared in the catalog, which render/ builds on, so
 * the catalog's conformance corpus (upstream/corpus.ts) can build one too.
 */
import type { CollectorActivations, DestinationRecord, PipelineRecord, RouteRecord, SourceRecord } from "../../shared/config-records.ts";

/** Everything a renderer needs for one collector's configuration, already validated. */
export interface CollectorConfigInput {
  /** `version`: what the collector reports (OpAMP `service.version`); renames upstream made are chosen by it. Absent or null: unknown. */
  collector: { id: string; name: string; version?: string | null };
  sources: ReadonlyMap<string, SourceRecord>;
  destinations: ReadonlyMap<string, DestinationRecord>;
  pipelines: ReadonlyMap<string, PipelineRecord>;
  activations: CollectorActivations;
  routes: RouteRecord[];
  /**
   * Pipelines whose matchers this collector's attributes satisfy (ids): each runs
   * with its topology's referenced source nodes, no route or activation needed.
   * Absent: none.
   */
  matched?: readonly string[];
}
