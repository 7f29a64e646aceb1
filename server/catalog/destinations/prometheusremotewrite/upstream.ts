/**
 * The Prometheus remote-write destination's upstream facts (upstream/types.ts):
 * the collector's prometheusremotewrite exporter; on Alloy otelcol.exporter.prometheus
 * into prometheus.remote_write.
 */
import { alloyAt, attr, blocks, contrib, HEADERS, RECEIVERS } from "../../upstream/shared.ts";
import type { TypeUpstream } from "../../upstream/types.ts";

export const UPSTREAM: TypeUpstream = {
  otelcol: [
    {
      type: "prometheusremotewrite",
      kind: "exporter",
      source: contrib("exporter/prometheusremotewriteexporter/config.go", "647b4c1fceb43ee8d938aaca6e179a1ac61f29ed"),
      config: { endpoint: "string", headers: HEADERS },
    },
  ],
  alloy: [
    {
      name: "otelcol.exporter.prometheus",
      stability: "generally-available",
      source: alloyAt("internal/component/otelcol/exporter/prometheus/prometheus.go"),
      arguments: { forward_to: attr(RECEIVERS) },
    },
    {
      name: "prometheus.remote_write",
      stability: "generally-available",
      source: alloyAt("internal/component/prometheus/remotewrite/types.go"),
      // EndpointOptions
      arguments: { endpoint: blocks({ url: attr("string"), headers: attr({ map: "string" }) }) },
    },
  ],
};
