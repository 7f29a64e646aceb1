/** Reads a testdata case (`<case>/input.yaml`) into the renderers' inputs. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import type { CollectorActivations, DestinationRecord, PipelineRecord, RouteRecord, SourceRecord } from "../../../shared/config-records.ts";
import type { CollectorConfigInput } from "../../catalog/render-input.ts";

export const TESTDATA = import.meta.dir;

interface RawCase {
  collector?: { id: string; name: string; version?: string };
  preview?: string;
  sources: SourceRecord[];
  destinations: DestinationRecord[];
  pipelines: PipelineRecord[];
  activations?: CollectorActivations;
  routes?: RouteRecord[];
  /** Pipelines the collector's attributes match (ids). */
  matched?: string[];
}

export interface TestCase {
  raw: RawCase;
  /** Set for collector cases. */
  input?: CollectorConfigInput;
  /** Set for preview cases. */
  preview?: {
    pipeline: PipelineRecord;
    sources: ReadonlyMap<string, SourceRecord>;
    destinations: ReadonlyMap<string, DestinationRecord>;
  };
}

export function byId<T extends { id: string }>(items: readonly T[]): Map<string, T> {
  return new Map(items.map((item) => [item.id, item]));
}

export function toInput(raw: RawCase): CollectorConfigInput {
  return {
    collector: raw.collector!,
    sources: byId(raw.sources),
    destinations: byId(raw.destinations),
    pipelines: byId(raw.pipelines),
    activations: raw.activations ?? { collectorId: raw.collector!.id, sources: [], destinations: [] },
    routes: raw.routes ?? [],
    ...(raw.matched ? { matched: raw.matched } : {}),
  };
}

export function loadCase(name: string): TestCase {
  const raw = parse(readFileSync(join(TESTDATA, name, "input.yaml"), "utf8")) as RawCase;
  if (raw.preview !== undefined) {
    const pipeline = raw.pipelines.find((p) => p.id === raw.preview)!;
    return { raw, preview: { pipeline, sources: byId(raw.sources), destinations: byId(raw.destinations) } };
  }
  return { raw, input: toInput(raw) };
}
