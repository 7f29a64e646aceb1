/** The filter processor's upstream facts (upstream/types.ts): the collector's filter processor and Alloy's otelcol.processor.filter. */
import { alloyAt, attr, block, contrib, ERROR_MODE, OUTPUT, STRINGS } from "../../upstream/shared.ts";
import type { OtelcolComponent, TypeUpstream } from "../../upstream/types.ts";

const CONDITIONS = { list: "string" } as const;
/** condition.ContextID.UnmarshalText (processor/filterprocessor/internal/condition/config.go). */
const CONTEXT = { oneOf: ["resource", "scope", "span", "spanevent", "metric", "datapoint", "log", "profile"] } as const;
const CONTEXT_CONDITIONS = { list: { object: { context: CONTEXT, conditions: CONDITIONS } } } as const;
const CONFIG = contrib("processor/filterprocessor/config.go", "038321994114ea01dd48bdefa38a836387038b1f");

/** The processor, whose key change filter.ts renders by version. */
export const FILTER_PROCESSOR: OtelcolComponent = {
  type: "filter",
  kind: "processor",
  source: CONFIG,
  config: {
    error_mode: ERROR_MODE,
    logs: { object: { log_record: CONDITIONS } },
    metrics: { object: { metric: CONDITIONS, datapoint: CONDITIONS } },
    traces: { object: { span: CONDITIONS, spanevent: CONDITIONS } },
    log_conditions: CONTEXT_CONDITIONS,
    metric_conditions: CONTEXT_CONDITIONS,
    trace_conditions: CONTEXT_CONDITIONS,
  },
  keyChange: {
    deprecated: ["logs", "metrics", "traces"],
    replacements: ["log_conditions", "metric_conditions", "trace_conditions"],
    // Added in contrib v0.146.0 (PR #44543, "[processor/filter] Introduce inferred-context"; the
    // opentelemetry.io blog "OTTL context inference comes to the Filter Processor", 2026-02-17);
    // config.go marks the old groups `Deprecated: use …Conditions instead` (so by v0.156.0).
    since: "0.146.0",
    source: CONFIG,
  },
};

export const UPSTREAM: TypeUpstream = {
  otelcol: [FILTER_PROCESSOR],
  alloy: [
    {
      name: "otelcol.processor.filter",
      stability: "generally-available",
      source: alloyAt("internal/component/otelcol/processor/filter/filter.go"),
      arguments: {
        error_mode: attr(ERROR_MODE),
        logs: block({ log_record: attr(STRINGS) }), // types.go LogConfig
        metrics: block({ metric: attr(STRINGS), datapoint: attr(STRINGS) }), // MetricConfig
        traces: block({ span: attr(STRINGS), spanevent: attr(STRINGS) }), // TraceConfig
        output: OUTPUT,
      },
    },
  ],
};
