/**
 * Collector configuration rendered from pipeline topologies: Runtime O
 * (OpenTelemetry Collector YAML) and Runtime R (Alloy syntax), for a whole
 * collector or for one pipeline's preview. Render-time problems (a signal a
 * source or destination does not carry, an inactive destination, a missing
 * record) throw ValidationError naming the offending path.
 */
export { renderAlloy } from "./alloy.ts";
export { renderOtelcol } from "./otelcol.ts";
export { renderPipelinePreview } from "./preview.ts";
