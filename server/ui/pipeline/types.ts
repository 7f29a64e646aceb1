/**
 * The shapes the pipeline editor shares with the server, imported as types
 * only (nothing of the server's code reaches the bundle), plus the few the
 * editor adds: what the palette offers and the problems pinned to the graph.
 */
import type { CatalogView } from "../../../shared/catalog.ts";
import type { Component } from "../../../shared/config-answers.ts";
import type { PipelineRecord, ProcessorSpec, ProcessorTemplate, Signal, Topology, TopologyEdge, TopologyNode } from "../../../shared/config-records.ts";
import type { PathDetail } from "../schema/errors.ts";

export type { CatalogView, PipelineRecord, ProcessorSpec, ProcessorTemplate, Signal, Topology, TopologyEdge, TopologyNode };

export type NodeKind = TopologyNode["kind"];

/** A source or destination record, as GET /sources and /destinations list them. */
export type ComponentRecord = Component;

/** What the editor needs besides the pipeline: the palette's contents and the names of referenced records. */
export interface EditorContext {
  signal: Signal;
  catalog: CatalogView;
  templates: ProcessorTemplate[];
  sources: ComponentRecord[];
  destinations: ComponentRecord[];
}

/** One thing the palette can put on the canvas: a node without id or position. */
export interface PaletteItem {
  key: string;
  label: string;
  description: string;
  node: Omit<TopologyNode, "id" | "position">;
  /** The readable base of the new node's id. */
  idBase: string;
}

/** API problems sorted by what they concern. */
export interface Problems {
  nodes: Map<string, string[]>;
  edges: Map<string, string[]>;
  other: string[];
  /**
   * The node problems inside a processor's config, again, with paths from
   * the processor (`config.actions[0].value`) and the message as `nodes`
   * has it, so the config form can show each beside its field.
   */
  configs: Map<string, PathDetail[]>;
}
