/** The debug destination's upstream facts (upstream/types.ts): the collector's debug exporter, and Alloy's, which is experimental. */
import { alloyAt, attr, core } from "../../upstream/shared.ts";
import type { AlloyComponent, TypeUpstream } from "../../upstream/types.ts";

/** Alloy's debug exporter, whose stability debug.ts names as why Runtime R cannot run it. */
export const ALLOY_DEBUG_EXPORTER: AlloyComponent = {
  name: "otelcol.exporter.debug",
  stability: "experimental",
  source: alloyAt("internal/component/otelcol/exporter/debug/debug.go"),
  arguments: { verbosity: attr("string") },
};

export const UPSTREAM: TypeUpstream = {
  otelcol: [
    {
      type: "debug",
      kind: "exporter",
      source: core("exporter/debugexporter/config.go"),
      // configtelemetry.Level as the debug exporter takes it.
      config: { verbosity: { oneOf: ["basic", "normal", "detailed"] } },
    },
  ],
  alloy: [ALLOY_DEBUG_EXPORTER],
};
