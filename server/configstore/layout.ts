/**
 * Where each record lives in the repository and how it is written: one
 * readable YAML file per record, so `git show` and a diff read like config.
 */
import { createHash } from "node:crypto";
import { parse, stringify } from "yaml";
import type { RecordKind } from "../../shared/changes.ts";
import type { CollectorActivations, DestinationRecord, PipelineRecord, RouteRecord, SourceRecord } from "../../shared/config-records.ts";

export const DIRS = {
  sources: "sources/",
  destinations: "destinations/",
  pipelines: "pipelines/",
  routes: "routes/",
  collectors: "collectors/",
} as const;

export const paths = {
  source: (id: string) => `${DIRS.sources}${id}.yaml`,
  destination: (id: string) => `${DIRS.destinations}${id}.yaml`,
  pipeline: (id: string) => `${DIRS.pipelines}${id}.yaml`,
  route: (id: string) => `${DIRS.routes}${id}.yaml`,
  activations: (collectorId: string) => `${DIRS.collectors}${collectorId}/activations.yaml`,
};

export function toYaml(record: unknown): string {
  return stringify(record, { lineWidth: 0 });
}

/** The id git gives a blob with this text, so a change is seen without reading the old blob. */
export function blobId(text: string): string {
  const bytes = Buffer.from(text, "utf8");
  return createHash("sha1").update(`blob ${bytes.byteLength}\0`).update(bytes).digest("hex");
}

/** All records of one configuration state (the working tree or a commit), parsed. */
export interface Snapshot {
  sources: Map<string, SourceRecord>;
  destinations: Map<string, DestinationRecord>;
  pipelines: Map<string, PipelineRecord>;
  routes: Map<string, RouteRecord>;
  activations: Map<string, CollectorActivations>;
}

export function emptySnapshot(): Snapshot {
  return { sources: new Map(), destinations: new Map(), pipelines: new Map(), routes: new Map(), activations: new Map() };
}

/** A copy whose maps can change without touching the original's. */
export function copySnapshot(snapshot: Snapshot): Snapshot {
  return {
    sources: new Map(snapshot.sources),
    destinations: new Map(snapshot.destinations),
    pipelines: new Map(snapshot.pipelines),
    routes: new Map(snapshot.routes),
    activations: new Map(snapshot.activations),
  };
}

/** The record kind and id a repository path holds (ids are file names); null for a path outside the layout. */
export function recordAt(path: string): { kind: RecordKind; id: string } | null {
  const yaml = (dir: string) =>
    path.startsWith(dir) && path.endsWith(".yaml") && !path.slice(dir.length).includes("/") ? path.slice(dir.length, -".yaml".length) : null;
  const pairs: [RecordKind, string][] = [
    ["source", DIRS.sources],
    ["destination", DIRS.destinations],
    ["pipeline", DIRS.pipelines],
    ["route", DIRS.routes],
  ];
  for (const [kind, dir] of pairs) {
    const id = yaml(dir);
    if (id) return { kind, id };
  }
  const activations =
    path.startsWith(DIRS.collectors) && path.endsWith("/activations.yaml") ? path.slice(DIRS.collectors.length, -"/activations.yaml".length) : null;
  return activations && !activations.includes("/") ? { kind: "collector", id: activations } : null;
}

/** Removes the record a file holds, found by its path alone. */
export function removeFromSnapshot(snapshot: Snapshot, path: string): void {
  const at = recordAt(path);
  if (!at) return;
  const held: Record<RecordKind, Map<string, unknown>> = {
    source: snapshot.sources,
    destination: snapshot.destinations,
    pipeline: snapshot.pipelines,
    route: snapshot.routes,
    collector: snapshot.activations,
  };
  held[at.kind].delete(at.id);
}

/** Adds one file to a snapshot by its path; files outside the layout are ignored. */
export function addToSnapshot(snapshot: Snapshot, path: string, text: string): void {
  const record = parse(text) as { id?: string; collectorId?: string };
  if (path.startsWith(DIRS.sources)) snapshot.sources.set(record.id!, record as SourceRecord);
  else if (path.startsWith(DIRS.destinations)) snapshot.destinations.set(record.id!, record as DestinationRecord);
  else if (path.startsWith(DIRS.pipelines)) snapshot.pipelines.set(record.id!, record as PipelineRecord);
  else if (path.startsWith(DIRS.routes)) snapshot.routes.set(record.id!, record as RouteRecord);
  else if (path.startsWith(DIRS.collectors) && path.endsWith("/activations.yaml")) {
    snapshot.activations.set(record.collectorId!, record as CollectorActivations);
  }
}
