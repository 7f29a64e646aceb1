/** The OTLP source's upstream facts (upstream/types.ts): the collector's otlp receiver and Alloy's otelcol.receiver.otlp. */
import { alloyAt, attr, block, core, OUTPUT } from "../../upstream/shared.ts";
import type { TypeUpstream } from "../../upstream/types.ts";
import type { Upstream } from "../delivery.ts";

export const UPSTREAM: TypeUpstream = {
  otelcol: [
    {
      type: "otlp",
      kind: "receiver",
      source: core("receiver/otlpreceiver/config.go"),
      config: { protocols: { object: { grpc: { object: { endpoint: "string" } }, http: { object: { endpoint: "string" } } } } },
    },
  ],
  alloy: [
    {
      name: "otelcol.receiver.otlp",
      stability: "generally-available",
      source: alloyAt("internal/component/otelcol/receiver/otlp/otlp.go"),
      arguments: {
        grpc: block({ endpoint: attr("string") }), // otelcol.GRPCServerArguments, config_grpc.go
        http: block({ endpoint: attr("string") }), // otelcol.HTTPServerArguments, config_http.go
        output: OUTPUT,
      },
    },
  ],
};

/** Where the parity table's facts about what each runtime delivers were read (delivery.ts). */
export const DELIVERY_UPSTREAM: readonly Upstream[] = [
  {
    repo: "grafana/alloy",
    path: "internal/component/otelcol/receiver/otlp/otlp.go",
    version: "v1.18.1",
    fact: "otelcol.receiver.otlp wraps the collector's otlpreceiver: data as sent.",
  },
];
