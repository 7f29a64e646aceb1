/**
 * Grafana Loki. The contrib `loki` exporter was removed from the collector,
 * and Loki 3 ingests OTLP natively, so both runtimes use the OTLP/HTTP
 * exporter against Loki's `/otlp` endpoint (the exporter appends `/v1/logs`).
 * Resource attributes then arrive as Loki's OTLP defaults map them.
 */
import { Type } from "@sinclair/typebox";
import { parseReferences } from "../../../../shared/attribute-refs.ts";
import { Closed, Headers, HttpUrl } from "../../schemas.ts";
import { defineDestination } from "../../types.ts";
import { otelcolType } from "../../versions.ts";
import { OTLP_HTTP_EXPORTER } from "../otlphttp/upstream.ts";
import { otlphttpBlock, otlphttpConfig } from "../otlphttp/otlphttp.ts";

export const lokiDestination = defineDestination({
  kind: "destination",
  type: "loki",
  title: "Grafana Loki",
  description: "Sends logs to Loki's native OTLP endpoint.",
  signals: ["logs"],
  schema: Closed({
    endpoint: HttpUrl({ description: "Loki's base URL, e.g. http://loki:3100; /otlp is appended unless present." }),
    tenant_id: Type.Optional(Type.String({ minLength: 1, pattern: "^\\S+$", description: "Tenant for multi-tenant Loki (X-Scope-OrgID)." })),
    headers: Headers(),
  }),
  check(config, root) {
    return referenceEndsUrl(config.endpoint) ? [{ path: `${root}.endpoint`, message: ENDING_REFERENCE }] : [];
  },
  otelcol(config, target) {
    return { type: otelcolType(OTLP_HTTP_EXPORTER, target), config: otlphttpConfig(lokiOtlpUrl(config.endpoint), lokiHeaders(config)) };
  },
  alloyEntry: "otelcol.exporter.otlphttp",
  alloy(config, label) {
    return [otlphttpBlock(label, lokiOtlpUrl(config.endpoint), lokiHeaders(config))];
  },
});

const ENDING_REFERENCE = "ends in an attribute reference, but svc must see how the URL ends to decide whether to append /otlp: end it with the port or a path";

/**
 * Whether lokiOtlpUrl's choice depends on what a reference in `endpoint` is
 * filled with (references are filled in after rendering): when the text after
 * the last one, trailing slashes aside, is empty or could be the end of `/otlp`.
 */
function referenceEndsUrl(endpoint: string): boolean {
  const last = parseReferences(endpoint).references?.at(-1);
  if (last === undefined) return false;
  const tail = endpoint.slice(last.end).replace(/\/+$/, "");
  return !tail.endsWith("/otlp") && "/otlp".endsWith(tail);
}

/** `http://loki:3100` → `http://loki:3100/otlp`; a URL that already ends in /otlp is kept. */
function lokiOtlpUrl(base: string): string {
  const trimmed = base.replace(/\/+$/, "");
  return trimmed.endsWith("/otlp") ? trimmed : `${trimmed}/otlp`;
}

function lokiHeaders(config: { tenant_id?: string; headers: Record<string, string> }): Record<string, string> {
  return config.tenant_id === undefined ? config.headers : { ...config.headers, "X-Scope-OrgID": config.tenant_id };
}
