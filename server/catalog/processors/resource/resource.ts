/**
 * Changes resource attributes (host.name, service.name, …). Runtime R has no
 * resource processor, so there each action becomes an OTTL statement of an
 * `otelcol.processor.transform` in the resource context; `hash` uses SHA-256
 * as the collector's attribute actions do.
 */
import type { Signal } from "../../../../shared/config-records.ts";
import { attr, block, raw } from "../../alloy-syntax.ts";
import { Closed } from "../../schemas.ts";
import { defineProcessor } from "../../types.ts";
import { actionEntries, AttributeActions, checkActions, ottlStatements } from "../actions.ts";

const STATEMENTS_BLOCK: Record<Signal, string> = {
  logs: "log_statements",
  metrics: "metric_statements",
  traces: "trace_statements",
};

export const resourceProcessor = defineProcessor({
  kind: "processor",
  type: "resource",
  title: "Resource",
  description: "Inserts, updates, deletes or hashes resource attributes such as service.name or deployment.environment.",
  signals: ["logs", "metrics", "traces"],
  schema: Closed({ attributes: AttributeActions("Actions applied in order to the resource attributes.") }),
  check(config, root) {
    return checkActions(config.attributes, `${root}.attributes`);
  },
  otelcol(config) {
    return { type: "resource", config: { attributes: actionEntries(config.attributes) } };
  },
  alloyEntry: "otelcol.processor.transform",
  alloy(config, label, signal, output) {
    return block("otelcol.processor.transform", label, [
      attr("error_mode", "ignore"),
      block(STATEMENTS_BLOCK[signal], undefined, [attr("context", "resource"), attr("statements", ottlStatements(config.attributes).map(raw))]),
      output,
    ]);
  },
});
