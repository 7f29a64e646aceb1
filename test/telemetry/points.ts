/** For own-metrics tests with the real OTLP exporter: point times set by the test, so rates do not depend on its timing. */
import type { ResourceMetrics } from "@opentelemetry/sdk-metrics";

/** Sets every point's end time to `seconds` (and its start to 1 s), as a collector would report them. */
export function at(rm: ResourceMetrics, seconds: number): ResourceMetrics {
  for (const sm of rm.scopeMetrics) {
    for (const m of sm.metrics) {
      for (const p of m.dataPoints as { startTime: [number, number]; endTime: [number, number] }[]) {
        p.startTime = [1, 0];
        p.endTime = [seconds, 0];
      }
    }
  }
  return rm;
}
