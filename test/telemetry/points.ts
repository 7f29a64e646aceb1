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

/** One cumulative, monotonic sum as OTLP JSON: a collector's own counter `name` at `value`, its point at `seconds` (started at 1 s). */
export function cumulativeSum(name: string, value: number, seconds: number, attributes: Record<string, string> = {}) {
  return {
    name,
    sum: {
      aggregationTemporality: 2,
      isMonotonic: true,
      dataPoints: [
        {
          attributes: Object.entries(attributes).map(([key, v]) => ({ key, value: { stringValue: v } })),
          startTimeUnixNano: "1000000000",
          timeUnixNano: String(BigInt(seconds) * 1_000_000_000n),
          asDouble: value,
        },
      ],
    },
  };
}

/** An OTLP JSON export request holding `metrics` under one resource and scope. */
export function metricsRequest<M>(metrics: M[]) {
  return { resourceMetrics: [{ scopeMetrics: [{ metrics }] }] };
}

/** POSTs `metrics` as OTLP JSON to the server's /v1/metrics with the collector's token; answers the response. */
export function pushMetrics(base: string, token: string, metrics: unknown[]): Promise<Response> {
  return fetch(`${base}/v1/metrics`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${token}` },
    body: JSON.stringify(metricsRequest(metrics)),
  });
}

/**
 * One collector's own metrics at `seconds`, sent with a token minted for it: the
 * records its `filelog/app` receiver accepted and the items its
 * `otlphttp/backend` exporter failed to send (the dashboard tests' fleet).
 */
export async function pushLogFlow(
  server: { base: string; call<T>(path: string, method?: string): Promise<T> },
  collectorId: string,
  seconds: number,
  accepted: number,
  failed: number,
): Promise<void> {
  const { token } = await server.call<{ token: string }>(`/collectors/${collectorId}/otlp-token`, "POST");
  const res = await pushMetrics(server.base, token, [
    cumulativeSum("otelcol_receiver_accepted_log_records", accepted, seconds, { receiver: "filelog/app" }),
    cumulativeSum("otelcol_exporter_send_failed_log_records", failed, seconds, { exporter: "otlphttp/backend" }),
  ]);
  if (res.status !== 200) throw new Error(`pushing own metrics: ${res.status} ${await res.text()}`);
}
