/**
 * What a catalog type is: its identity, the signals it handles, the schema of
 * its `config`, and how it renders in each runtime. Renderers receive config
 * that is already validated with defaults applied.
 */
import type { Static, TObject } from "@sinclair/typebox";
import type { Signal } from "../../shared/config-records.ts";
import type { ErrorDetail } from "../errors.ts";
import type { AlloyBlock } from "./alloy-syntax.ts";
import type { Runtime } from "../../shared/vocabulary.ts";
import type { SourceDelivery } from "./sources/delivery.ts";

export const COMPONENT_KINDS = ["source", "destination", "processor"] as const;
export type ComponentKind = (typeof COMPONENT_KINDS)[number];

/**
 * What a Runtime O render depends on besides the config: the collector's
 * reported version (`service.version`), which picks between upstream's old
 * and new names; null when unknown, which picks the names every supported
 * version accepts.
 */
export interface OtelcolTarget {
  version: CollectorVersion | null;
}

/** A collector release, e.g. 0.144.0. */
export interface CollectorVersion {
  major: number;
  minor: number;
  patch: number;
}

/** One Runtime O component: its type id (the part before `/`) and its config map. */
export interface OtelcolComponent {
  type: string;
  config: Record<string, unknown>;
}

interface TypeBase<S extends TObject> {
  readonly type: string;
  readonly title: string;
  readonly description: string;
  readonly signals: readonly Signal[];
  /** Objects are closed (`additionalProperties: false`); fields with a `default` are filled in. */
  readonly schema: S;
  /**
   * Rules the schema cannot say (cross-field rules, OTTL syntax). Paths in
   * the returned problems start at `root`, e.g. `config.actions[0].value`.
   */
  check?(config: Static<S>, root: string): ErrorDetail[];
}

interface SourceBase<S extends TObject> extends TypeBase<S> {
  readonly kind: "source";
  /** What each runtime delivers for it, the difference and how svc handles it, with upstream sources (sources/delivery.ts). */
  readonly delivery: SourceDelivery;
  /** The receiver, in the keys the collector's reported version accepts (`target` unset: unknown). */
  otelcol(config: Static<S>, target?: OtelcolTarget): OtelcolComponent;
}

interface AlloySource<S extends TObject> {
  /**
   * The blocks that read this source, through an otelcol receiver, ending in
   * the otelcol component (the receiver, or a transform that shapes records
   * as Runtime O's receiver does) that carries `output`, the block the
   * renderer wires to the pipeline.
   */
  alloy(config: Static<S>, label: string, output: AlloyBlock): AlloyBlock[];
  /** Why Runtime R cannot run this config as Runtime O does (an option Alloy cannot express), or undefined. */
  alloyProblem?(config: Static<S>): string | undefined;
  readonly alloyUnavailable?: undefined;
}

interface OtelcolOnlySource {
  readonly alloy?: undefined;
  readonly alloyProblem?: undefined;
  /** Why Runtime R cannot run it, e.g. Alloy has no component that reads it. */
  readonly alloyUnavailable: string;
}

export type SourceType<S extends TObject = TObject> = SourceBase<S> & (AlloySource<S> | OtelcolOnlySource);

interface AlloyDestination<S extends TObject> {
  /** Block name of the component whose `input` accepts otelcol data, e.g. `otelcol.exporter.otlp`. */
  readonly alloyEntry: string;
  /** The blocks that write to this destination; the first one is `alloyEntry`. */
  alloy(config: Static<S>, label: string): AlloyBlock[];
  readonly alloyUnavailable?: undefined;
}

interface OtelcolOnlyDestination {
  readonly alloyEntry?: undefined;
  readonly alloy?: undefined;
  /** Why Runtime R cannot run it, e.g. its only Alloy component is not generally available. */
  readonly alloyUnavailable: string;
}

interface DestinationBase<S extends TObject> extends TypeBase<S> {
  readonly kind: "destination";
  /** The exporter. */
  otelcol(config: Static<S>, target: OtelcolTarget): OtelcolComponent;
}

export type DestinationType<S extends TObject = TObject> = DestinationBase<S> & (AlloyDestination<S> | OtelcolOnlyDestination);

export interface ProcessorType<S extends TObject = TObject> extends TypeBase<S> {
  readonly kind: "processor";
  otelcol(config: Static<S>, signal: Signal, target: OtelcolTarget): OtelcolComponent;
  /** Problems with using this config in a pipeline of `signal` (paths from `root`), e.g. conditions for another signal. */
  checkSignal?(config: Static<S>, signal: Signal, root: string): ErrorDetail[];
  /** Block name of the processor component, e.g. `otelcol.processor.batch`. */
  readonly alloyEntry: string;
  /** One `alloyEntry` block carrying `output`. */
  alloy(config: Static<S>, label: string, signal: Signal, output: AlloyBlock): AlloyBlock;
}

export type ComponentType = SourceType | DestinationType | ProcessorType;

/** The runtimes that can run a type: every type runs on Runtime O; a source or destination may lack a Runtime R form. */
export function runtimesOf(type: ComponentType): Runtime[] {
  return type.kind !== "processor" && type.alloy === undefined ? ["otelcol"] : ["otelcol", "alloy"];
}

/** Identity helpers that keep each module's config type inferred from its schema. */
export function defineSource<S extends TObject>(type: SourceBase<S> & AlloySource<S>): SourceBase<S> & AlloySource<S> {
  return type;
}

/** A source Runtime R cannot run; `alloyUnavailable` says why. */
export function defineOtelcolOnlySource<S extends TObject>(type: SourceBase<S> & OtelcolOnlySource): SourceBase<S> & OtelcolOnlySource {
  return type;
}

export function defineDestination<S extends TObject>(type: DestinationType<S>): DestinationType<S> {
  return type;
}

export function defineProcessor<S extends TObject>(type: ProcessorType<S>): ProcessorType<S> {
  return type;
}
