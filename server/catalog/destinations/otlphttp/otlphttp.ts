/** OTLP over HTTP to a backend; the exporter appends /v1/logs, /v1/metrics or /v1/traces. */
import { attr, block } from "../../alloy-syntax.ts";
import { Closed, Headers, HttpUrl, sortedHeaders } from "../../schemas.ts";
import { defineDestination } from "../../types.ts";
import { otelcolType } from "../../versions.ts";
import { OTLP_HTTP_EXPORTER } from "./upstream.ts";
import {
  alloyClientMembers,
  alloyExporterBlocks,
  clientFields,
  clientProblems,
  HttpTls,
  NO_CLIENT_SETTINGS,
  otelcolClient,
  type ClientSettings,
} from "../otlp-client.ts";

export const otlphttpDestination = defineDestination({
  kind: "destination",
  type: "otlphttp",
  title: "OTLP/HTTP",
  description: "Sends logs, metrics and traces over OTLP/HTTP to a base URL such as https://otlp.example.com.",
  signals: ["logs", "metrics", "traces"],
  schema: Closed({
    endpoint: HttpUrl({ description: "Base URL; the signal path (/v1/logs, …) is appended." }),
    headers: Headers(),
    ...clientFields(HttpTls()),
  }),
  check(config, root) {
    return clientProblems(config, root);
  },
  otelcol(config, target) {
    return { type: otelcolType(OTLP_HTTP_EXPORTER, target), config: otlphttpConfig(config.endpoint, config.headers, config) };
  },
  alloyEntry: "otelcol.exporter.otlphttp",
  alloy(config, label) {
    return [otlphttpBlock(label, config.endpoint, config.headers, config)];
  },
});

/** The otlphttp exporter config, shared with the Loki destination (which has no client settings of its own). */
export function otlphttpConfig(endpoint: string, headers: Record<string, string>, client: ClientSettings = NO_CLIENT_SETTINGS): Record<string, unknown> {
  return { endpoint, ...(Object.keys(headers).length > 0 ? { headers: sortedHeaders(headers) } : {}), ...otelcolClient(client) };
}

/** The `otelcol.exporter.otlphttp` block, shared with the Loki destination. */
export function otlphttpBlock(label: string, endpoint: string, headers: Record<string, string>, client: ClientSettings = NO_CLIENT_SETTINGS) {
  return block("otelcol.exporter.otlphttp", label, [
    block("client", undefined, [attr("endpoint", endpoint), Object.keys(headers).length > 0 && attr("headers", headers), ...alloyClientMembers(client)]),
    ...alloyExporterBlocks(client),
  ]);
}
