/**
 * The configuration records the git-backed store holds, one YAML file each.
 * These shapes are fixed: the API, the UI, the renderers and automation agree
 * on them. Catalog types give `config` its schema per `type`.
 */

export const SIGNALS = ["logs", "metrics", "traces"] as const;
export type Signal = (typeof SIGNALS)[number];

/** A source of telemetry, e.g. `{type: "filelog", config: {include: ["/var/log/*.log"]}}`. */
export interface SourceRecord {
  id: string;
  name: string;
  type: string;
  config: Record<string, unknown>;
}

/** Where telemetry goes, e.g. `{type: "otlphttp", config: {endpoint: "https://..."}}`. */
export interface DestinationRecord {
  id: string;
  name: string;
  type: string;
  config: Record<string, unknown>;
}

export interface ProcessorSpec {
  type: string;
  config: Record<string, unknown>;
}

/** A canned processor a pipeline can start from (GET /processor-templates). */
export interface ProcessorTemplate {
  id: string;
  name: string;
  description: string;
  processor: ProcessorSpec;
}

/**
 * A node of a pipeline graph. Source and destination nodes may name a record
 * by `ref`; without one, a source node stands for whatever source a route
 * attaches, and a destination node for every destination active on the collector.
 */
export interface TopologyNode {
  id: string;
  kind: "source" | "processor" | "destination";
  ref?: string;
  processor?: ProcessorSpec;
  position?: { x: number; y: number };
}

export interface TopologyEdge {
  id: string;
  source: string;
  target: string;
}

export interface Topology {
  nodes: TopologyNode[];
  edges: TopologyEdge[];
}

/** A topology as clients send it: a processor's config may be left out and takes its defaults. */
export interface TopologyInput {
  nodes: (Omit<TopologyNode, "processor"> & { processor?: { type: string; config?: Record<string, unknown> } })[];
  edges: TopologyEdge[];
}

export interface PipelineRecord {
  id: string;
  name: string;
  signal: Signal;
  topology: Topology;
  /**
   * Attribute matchers (shared/matchers.ts, Alertmanager syntax): every collector whose
   * attributes match all of them runs the pipeline with its topology's referenced source and
   * destination nodes, no route needed. Absent or empty: only routes assign it.
   */
  matchers?: string[];
}

/** Attaches a pipeline to one source active on one collector. */
export interface RouteRecord {
  id: string;
  collectorId: string;
  sourceId: string;
  pipelineId: string;
}

export interface SourceActivation {
  sourceId: string;
  configOverrides: Record<string, unknown>;
}

export interface DestinationActivation {
  destinationId: string;
  configOverrides: Record<string, unknown>;
  tags: Record<string, string>;
}

/** What is active on one collector: `collectors/<id>/activations.yaml`. */
export interface CollectorActivations {
  collectorId: string;
  sources: SourceActivation[];
  destinations: DestinationActivation[];
}
