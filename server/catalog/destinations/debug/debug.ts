/**
 * The collector's own log: for trying a pipeline out, never for production
 * data. Runtime O only: Alloy's `otelcol.exporter.debug` is experimental, and
 * Alloy (its remotecfg controller included) loads only generally-available
 * components unless started with a lower `--stability.level`, so one such
 * block makes the whole remote config fail to load.
 */
import { Closed, StringEnum } from "../../schemas.ts";
import { defineDestination } from "../../types.ts";
import { ALLOY_DEBUG_EXPORTER } from "./upstream.ts";

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
  alloyUnavailable: `Alloy's debug exporter (${ALLOY_DEBUG_EXPORTER.name}) is ${ALLOY_DEBUG_EXPORTER.stability}, and Alloy loads only generally-available components by default`,
});
