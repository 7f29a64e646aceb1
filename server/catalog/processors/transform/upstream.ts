/**
 * The transform processor's upstream facts (upstream/types.ts): the
 * collector's transform processor and Alloy's otelcol.processor.transform,
 * which the Loki chain, filelog parsing and the resource processor render too.
 */
import { alloyAt, attr, blocks, contrib, ERROR_MODE, OUTPUT, STRINGS } from "../../upstream/shared.ts";
import type { TypeUpstream } from "../../upstream/types.ts";

/** common.ContextID.UnmarshalText, processor/transformprocessor/internal/common/config.go @ba96fac1; Alloy's transform.go the same. */
const CONTEXT = { oneOf: ["resource", "scope", "span", "spanevent", "metric", "datapoint", "log"] } as const;
const STATEMENTS = { list: { object: { context: CONTEXT, statements: { list: "string" } } } } as const;

export const UPSTREAM: TypeUpstream = {
  otelcol: [
    // Config{ErrorMode, TraceStatements, MetricStatements, LogStatements []common.ContextStatements, FlattenData}
    // in config.go; ContextStatements{Context ContextID, Statements []string} and ContextID.UnmarshalText
    // in internal/common/config.go. Config.Unmarshal also takes a flat list of strings per key (the
    // context then inferred); the catalog renders the structured form, which every version takes.
    // Newer common/config.go adds per-group `conditions` and `error_mode`, which we do not emit.
    {
      type: "transform",
      kind: "processor",
      source: contrib("processor/transformprocessor/config.go", "a06eecf1ed29fe263a0de977886bdd0a062bb16a"),
      config: { error_mode: ERROR_MODE, log_statements: STATEMENTS, metric_statements: STATEMENTS, trace_statements: STATEMENTS },
    },
  ],
  alloy: [
    {
      name: "otelcol.processor.transform",
      stability: "generally-available",
      source: alloyAt("internal/component/otelcol/processor/transform/transform.go"),
      arguments: {
        error_mode: attr(ERROR_MODE),
        log_statements: blocks({ context: attr(CONTEXT), statements: attr(STRINGS) }),
        metric_statements: blocks({ context: attr(CONTEXT), statements: attr(STRINGS) }),
        trace_statements: blocks({ context: attr(CONTEXT), statements: attr(STRINGS) }),
        output: OUTPUT,
      },
    },
  ],
};
