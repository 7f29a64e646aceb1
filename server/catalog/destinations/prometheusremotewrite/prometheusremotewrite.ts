/**
 * Prometheus remote write (Prometheus, Mimir, Thanos, …). Runtime R converts
 * with `otelcol.exporter.prometheus` and writes with `prometheus.remote_write`.
 */
import { attr, block, ref } from "../../alloy-syntax.ts";
import { Closed, Headers, HttpUrl, sortedHeaders } from "../../schemas.ts";
import { defineDestination } from "../../types.ts";

export const prometheusRemoteWriteDestination = defineDestination({
  kind: "destination",
  type: "prometheusremotewrite",
  title: "Prometheus remote write",
  description: "Writes metrics with the Prometheus remote-write protocol, e.g. to Mimir or Prometheus.",
  signals: ["metrics"],
  schema: Closed({
    endpoint: HttpUrl({ description: "The full write URL, e.g. http://mimir:9009/api/v1/push." }),
    headers: Headers(),
  }),
  otelcol(config) {
    return {
      type: "prometheusremotewrite",
      config: {
        endpoint: config.endpoint,
        ...(Object.keys(config.headers).length > 0 ? { headers: sortedHeaders(config.headers) } : {}),
      },
    };
  },
  alloyEntry: "otelcol.exporter.prometheus",
  alloy(config, label) {
    return [
      block("otelcol.exporter.prometheus", label, [attr("forward_to", [ref(`prometheus.remote_write.${label}.receiver`)])]),
      block("prometheus.remote_write", label, [
        block("endpoint", undefined, [attr("url", config.endpoint), Object.keys(config.headers).length > 0 && attr("headers", config.headers)]),
      ]),
    ];
  },
});
