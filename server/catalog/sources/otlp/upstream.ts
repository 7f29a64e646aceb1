/** The OTLP source's upstream facts (upstream/types.ts): the collector's otlp receiver and Alloy's otelcol.receiver.otlp. */
import { alloyAt, attr, block, core, OUTPUT } from "../../upstream/shared.ts";
import type { TypeUpstream } from "../../upstream/types.ts";

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
