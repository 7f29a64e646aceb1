/**
 * What a condition may name in each OTTL context: paths, enum symbols and
 * converters. Only the log context is evaluated (dry-run); the others are
 * checked so that filter conditions for metrics and traces fail on save
 * rather than on the collector.
 */

export const OTTL_CONTEXTS = ["log", "metric", "datapoint", "span", "spanevent"] as const;
export type OttlContext = (typeof OTTL_CONTEXTS)[number];

/**
 * The contexts a transform processor's statement group may name: the filter's and the
 * `resource` and `scope` ones (common.ContextID, processor/transformprocessor/internal/common/config.go).
 */
export const STATEMENT_CONTEXTS = ["resource", "scope", ...OTTL_CONTEXTS] as const;
export type StatementContext = (typeof STATEMENT_CONTEXTS)[number];

/**
 * How a path takes `[...]` keys: `none`; `map`, a string key first and then
 * any keys into nested values (`attributes["a"]["b"]`, `attributes["l"][0]`);
 * `any`, keys of either kind from the start (`body[0]`, `body["k"]`).
 */
export type KeyRule = "none" | "map" | "any";

const SCOPE: Record<string, KeyRule> = {
  "instrumentation_scope.name": "none",
  "instrumentation_scope.version": "none",
  "instrumentation_scope.attributes": "map",
  "resource.attributes": "map",
};

const METRIC_FIELDS = ["name", "description", "unit", "type", "aggregation_temporality", "is_monotonic"];

export const PATHS: Record<StatementContext, Readonly<Record<string, KeyRule>>> = {
  resource: { attributes: "map", dropped_attributes_count: "none" },
  scope: { name: "none", version: "none", attributes: "map", dropped_attributes_count: "none", "resource.attributes": "map" },
  // ottllog's paths (pkg/ottl/contexts/internal/ctxlog/log.go, code search id 291785263), less
  // `time`/`observed_time` (Go time values) and bare `trace_id`/`span_id` (byte ids), which
  // the dry-run has no value kind for.
  log: {
    body: "any",
    attributes: "map",
    severity_text: "none",
    severity_number: "none",
    time_unix_nano: "none",
    observed_time_unix_nano: "none",
    flags: "none",
    dropped_attributes_count: "none",
    "trace_id.string": "none",
    "span_id.string": "none",
    ...SCOPE,
  },
  metric: {
    ...Object.fromEntries(METRIC_FIELDS.map((f) => [f, "none" as const])),
    ...SCOPE,
  },
  datapoint: {
    attributes: "map",
    ...Object.fromEntries(METRIC_FIELDS.map((f) => [`metric.${f}`, "none" as const])),
    value_int: "none",
    value_double: "none",
    count: "none",
    sum: "none",
    flags: "none",
    start_time_unix_nano: "none",
    time_unix_nano: "none",
    ...SCOPE,
  },
  span: {
    name: "none",
    kind: "none",
    "status.code": "none",
    "status.message": "none",
    attributes: "map",
    "trace_id.string": "none",
    "span_id.string": "none",
    "parent_span_id.string": "none",
    trace_state: "none",
    start_time_unix_nano: "none",
    end_time_unix_nano: "none",
    dropped_attributes_count: "none",
    ...SCOPE,
  },
  spanevent: {
    name: "none",
    attributes: "map",
    time_unix_nano: "none",
    dropped_attributes_count: "none",
    "span.name": "none",
    "span.kind": "none",
    "span.status.code": "none",
    "span.attributes": "map",
    ...SCOPE,
  },
};

/** SEVERITY_NUMBER_TRACE = 1 … SEVERITY_NUMBER_FATAL4 = 24, as in the OTLP proto. */
export const SEVERITY_NUMBERS: ReadonlyMap<string, number> = new Map([
  ["SEVERITY_NUMBER_UNSPECIFIED", 0],
  ...["TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL"].flatMap((level, i) =>
    ["", "2", "3", "4"].map((n, j): [string, number] => [`SEVERITY_NUMBER_${level}${n}`, i * 4 + j + 1]),
  ),
]);

function symbols(prefix: string, names: string[]): [string, number][] {
  return names.map((name, i) => [`${prefix}${name}`, i]);
}

const METRIC_ENUMS = [
  ...symbols("METRIC_DATA_TYPE_", ["NONE", "GAUGE", "SUM", "HISTOGRAM", "EXPONENTIAL_HISTOGRAM", "SUMMARY"]),
  ...symbols("AGGREGATION_TEMPORALITY_", ["UNSPECIFIED", "DELTA", "CUMULATIVE"]),
];
const SPAN_ENUMS = [
  ...symbols("SPAN_KIND_", ["UNSPECIFIED", "INTERNAL", "SERVER", "CLIENT", "PRODUCER", "CONSUMER"]),
  ...symbols("STATUS_CODE_", ["UNSET", "OK", "ERROR"]),
];

export const ENUMS: Record<StatementContext, ReadonlyMap<string, number>> = {
  resource: new Map(),
  scope: new Map(),
  log: SEVERITY_NUMBERS,
  metric: new Map(METRIC_ENUMS),
  datapoint: new Map([...METRIC_ENUMS, ...symbols("FLAG_", ["NONE", "NO_RECORDED_VALUE"])]),
  span: new Map(SPAN_ENUMS),
  spanevent: new Map(SPAN_ENUMS),
};

/** The converters a condition may call, with their parameter names. All return a bool. */
export const FUNCTIONS: Readonly<Record<string, readonly string[]>> = {
  IsMatch: ["target", "pattern"],
  IsString: ["value"],
  IsInt: ["value"],
  IsDouble: ["value"],
  IsBool: ["value"],
  IsMap: ["value"],
  IsList: ["value"],
};
