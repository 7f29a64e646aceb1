/**
 * The OTLP/HTTP destination's upstream facts (upstream/types.ts): the
 * collector's otlp_http exporter and Alloy's otelcol.exporter.otlphttp, which
 * the loki destination renders too.
 */
import { ALLOY_EXPORTER_ARGUMENTS, alloyAt, CLIENT_SETTINGS, CORE, core, HEADERS } from "../../upstream/shared.ts";
import type { OtelcolComponent, TypeUpstream } from "../../upstream/types.ts";

/** The exporter, whose rename otlphttp.ts and loki.ts render by version. */
export const OTLP_HTTP_EXPORTER: OtelcolComponent = {
  type: "otlp_http",
  kind: "exporter",
  source: core("exporter/otlphttpexporter/config.go"),
  config: { endpoint: "string", headers: HEADERS, ...CLIENT_SETTINGS },
  renamed: {
    deprecated: "otlphttp",
    since: "0.144.0",
    // metadata.yaml: `type: otlp_http`, `deprecated_type: otlphttp`; CHANGELOG v0.144.0 (#14396).
    source: { repo: CORE, path: "exporter/otlphttpexporter/metadata.yaml", ref: "v0.144.0" },
  },
};

export const UPSTREAM: TypeUpstream = {
  otelcol: [OTLP_HTTP_EXPORTER],
  alloy: [
    // otelcol.HTTPClientArguments, config_http.go
    {
      name: "otelcol.exporter.otlphttp",
      stability: "generally-available",
      source: alloyAt("internal/component/otelcol/exporter/otlphttp/otlphttp.go"),
      arguments: ALLOY_EXPORTER_ARGUMENTS,
    },
  ],
};
