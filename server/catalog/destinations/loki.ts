/**
 * Grafana Loki. The contrib `loki` exporter was removed from the collector,
 * and Loki 3 ingests OTLP natively, so both runtimes use the OTLP/HTTP
 * exporter against Loki's `/otlp` endpoint (the exporter appends `/v1/logs`).
 * Resource attributes then arrive as Loki's OTLP defaults map them.
 */
import { Type } from "@sinclair/typebox";
import { Closed, Headers, HttpUrl } from "../schemas.ts";
import { defineDestination } from "../types.ts";
import { otelcolType } from "../versions.ts";
import { otlphttpBlock, otlphttpConfig } from "./otlphttp.ts";

export const lokiDestination = defineDestination({
  kind: "destination",
  type: "loki",
  title: "Grafana Loki",
  description: "Sends logs to Loki's native OTLP endpoint.",
  signals: ["logs"],
  schema: Closed({
    endpoint: HttpUrl({ description: "Loki's base URL, e.g. http://loki:3100; /otlp is appended unless present." }),
    tenant_id: Type.Optional(
      Type.String({ minLength: 1, pattern: "^\\S+$", description: "Tenant for multi-tenant Loki (X-Scope-OrgID)." }),
    ),
    headers: Headers(),
  }),
  otelcol(config, target) {
    return { type: otelcolType("otlp_http", target), config: otlphttpConfig(lokiOtlpUrl(config.endpoint), lokiHeaders(config)) };
  },
  alloyEntry: "otelcol.exporter.otlphttp",
  alloy(config, label) {
    return [otlphttpBlock(label, lokiOtlpUrl(config.endpoint), lokiHeaders(config))];
  },
});

/** `http://loki:3100` → `http://loki:3100/otlp`; a URL that already ends in /otlp is kept. */
function lokiOtlpUrl(base: string): string {
  const trimmed = base.replace(/\/+$/, "");
  return trimmed.endsWith("/otlp") ? trimmed : `${trimmed}/otlp`;
}

function lokiHeaders(config: { tenant_id?: string; headers: Record<string, string> }): Record<string, string> {
  return config.tenant_id === undefined ? config.headers : { ...config.headers, "X-Scope-OrgID": config.tenant_id };
}
