/**
 * The shape of the upstream facts each catalog type's folder records in its
 * `upstream.ts` (and shared.ts here, for components several types render):
 * for each component a renderer can emit, the config keys and value types it
 * takes (only as far as we emit them), its stability, and the upstream file
 * and version the facts were read from. Tests walk every rendered config
 * against these records; renderers read the version facts (renames) from them.
 */

/** Where a fact was read: repository, path in it, and a tag or commit. */
export interface UpstreamSource {
  repo: string;
  path: string;
  ref: string;
}

/**
 * A value as the upstream decoder takes it. Scalars name the Go type
 * (`uint32`, `go-duration` for time.Duration parsed by time.ParseDuration,
 * `prometheus-duration` for model.Duration); `scalar` is Go `any` holding a
 * string, number or bool; `capsule` is an Alloy reference to another
 * component's export; `object` is a struct with exactly these keys; `oneOf`
 * is a string upstream checks against a fixed set (its Validate() or
 * UnmarshalText).
 */
export type ValueType =
  | "string"
  | "bool"
  | "int"
  | "uint32"
  | "scalar"
  | "go-duration"
  | "prometheus-duration"
  | "capsule"
  | { oneOf: readonly string[] }
  | { list: ValueType }
  | { map: ValueType }
  | { object: Readonly<Record<string, ValueType>> };

/** Alloy bodies hold attributes and blocks; a block may repeat when upstream takes a slice. */
export type AlloyMember = { attr: ValueType } | { block: AlloyBody; repeatable?: true };
export type AlloyBody = Readonly<Record<string, AlloyMember>>;

/** Alloy's featuregate stability levels (internal/featuregate). */
export type AlloyStability = "generally-available" | "public-preview" | "experimental";

/** An upstream `Validate()` rule: `left` must not exceed `right` once defaults are applied. */
export interface NotGreaterRule {
  rule: "not-greater";
  left: string;
  right: string;
  source: UpstreamSource;
}

export interface AlloyComponent {
  /** The block name, e.g. `otelcol.exporter.otlp`. */
  name: string;
  stability: AlloyStability;
  /** The Arguments struct (and the stability it registers with). */
  source: UpstreamSource;
  arguments: AlloyBody;
  /** Defaults of the arguments the rules read (SetToDefault). */
  defaults?: Readonly<Record<string, string>>;
  rules?: readonly NotGreaterRule[];
}

export type OtelcolKind = "receiver" | "processor" | "exporter";

/** A component type renamed upstream, the old name kept as a deprecated alias. */
export interface Rename {
  /** The old type, accepted by every version we support. */
  deprecated: string;
  /** The first collector version that accepts the new type. */
  since: string;
  source: UpstreamSource;
}

/** Config keys introduced by a version, replacing deprecated ones. */
export interface KeyChange {
  deprecated: readonly string[];
  replacements: readonly string[];
  since: string;
  source: UpstreamSource;
  /**
   * A release known to refuse the deprecated keys (the real collector's
   * `validate`, test/upstream/otelcol-validate.test.ts): a collector whose
   * version is unknown then gets the replacements, which current releases take.
   */
  refusedBy?: string;
}

/** The first collector version whose component takes the config keys the catalog writes. */
export interface MinimumVersion {
  since: string;
  source: UpstreamSource;
}

export interface OtelcolComponent {
  /** The type the collector YAML names it with (`receivers.otlp/…`). */
  type: string;
  kind: OtelcolKind;
  source: UpstreamSource;
  config: Readonly<Record<string, ValueType>>;
  renamed?: Rename;
  keyChange?: KeyChange;
  minimumVersion?: MinimumVersion;
}

/**
 * The upstream facts of one catalog type's folder: the components its
 * renderers emit on each runtime that no other folder records, and the
 * further files it read (shared settings, parsers) by where they were read.
 */
export interface TypeUpstream {
  otelcol: readonly OtelcolComponent[];
  alloy: readonly AlloyComponent[];
  also?: readonly UpstreamSource[];
}
