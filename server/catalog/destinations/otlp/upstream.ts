/** The OTLP (gRPC) destination's upstream facts (upstream/types.ts): the collector's otlp_grpc exporter and Alloy's otelcol.exporter.otlp. */
import { ALLOY_EXPORTER_ARGUMENTS, alloyAt, CLIENT_SETTINGS, CORE, core, HEADERS } from "../../upstream/shared.ts";
import type { OtelcolComponent, TypeUpstream } from "../../upstream/types.ts";

/** The exporter, whose rename otlp.ts renders by version. */
export const OTLP_GRPC_EXPORTER: OtelcolComponent = {
  type: "otlp_grpc",
  kind: "exporter",
  source: core("exporter/otlpexporter/config.go"),
  config: { endpoint: "string", headers: HEADERS, ...CLIENT_SETTINGS },
  renamed: {
    deprecated: "otlp",
    since: "0.144.0",
    // metadata.yaml: `type: otlp_grpc`, `deprecated_type: otlp`; CHANGELOG v0.144.0 (#14403).
    source: { repo: CORE, path: "exporter/otlpexporter/metadata.yaml", ref: "v0.144.0" },
  },
};

export const UPSTREAM: TypeUpstream = {
  otelcol: [OTLP_GRPC_EXPORTER],
  alloy: [
    // otelcol.GRPCClientArguments (config_grpc.go), TLSClientArguments (config_tls.go)
    {
      name: "otelcol.exporter.otlp",
      stability: "generally-available",
      source: alloyAt("internal/component/otelcol/exporter/otlp/otlp.go"),
      arguments: ALLOY_EXPORTER_ARGUMENTS,
    },
  ],
};
