/** The collector's own log: for trying a pipeline out, never for production data. */
import { attr, block } from "../../render/alloy-syntax.ts";
import { Closed, StringEnum } from "../schemas.ts";
import { defineDestination } from "../types.ts";

export const debugDestination = defineDestination({
  kind: "destination",
  type: "debug",
  title: "Debug output",
  description: "Writes telemetry to the collector's own log, for trying a pipeline out.",
  signals: ["logs", "metrics", "traces"],
  schema: Closed({
    verbosity: StringEnum(["basic", "normal", "detailed"], {
      default: "basic",
      description: "basic: counts only; normal: one line per record; detailed: every field.",
    }),
  }),
  otelcol(config) {
    return { type: "debug", config: { verbosity: config.verbosity } };
  },
  alloyEntry: "otelcol.exporter.debug",
  alloy(config, label) {
    return [block("otelcol.exporter.debug", label, [attr("verbosity", config.verbosity)])];
  },
});
