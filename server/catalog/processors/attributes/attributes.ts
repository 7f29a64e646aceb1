/** Inserts, updates, deletes or hashes attributes of each log record, data point or span. */
import { attr, block } from "../../alloy-syntax.ts";
import { Closed } from "../../schemas.ts";
import { defineProcessor } from "../../types.ts";
import { actionEntries, AttributeActions, checkActions } from "../actions.ts";

export const attributesProcessor = defineProcessor({
  kind: "processor",
  type: "attributes",
  title: "Attributes",
  description: "Inserts, updates, deletes or hashes attributes of each log record, data point or span.",
  signals: ["logs", "metrics", "traces"],
  schema: Closed({ actions: AttributeActions("Actions applied in order.") }),
  check(config, root) {
    return checkActions(config.actions, `${root}.actions`);
  },
  otelcol(config) {
    return { type: "attributes", config: { actions: actionEntries(config.actions) } };
  },
  alloyEntry: "otelcol.processor.attributes",
  alloy(config, label, _signal, output) {
    return block("otelcol.processor.attributes", label, [
      ...actionEntries(config.actions).map((a) =>
        block(
          "action",
          undefined,
          Object.entries(a).map(([name, value]) => attr(name, value)),
        ),
      ),
      output,
    ]);
  },
});
