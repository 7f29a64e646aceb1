/** OTLP over gRPC to another collector or a backend. */
import { Type } from "@sinclair/typebox";
import { attr, block } from "../../alloy-syntax.ts";
import { Closed, Headers, sortedHeaders } from "../../schemas.ts";
import { defineDestination } from "../../types.ts";
import { otelcolType } from "../../versions.ts";
import { OTLP_GRPC_EXPORTER } from "./upstream.ts";
import { alloyClientMembers, alloyExporterBlocks, clientFields, clientProblems, GrpcTls, otelcolClient } from "../otlp-client.ts";

export const otlpDestination = defineDestination({
  kind: "destination",
  type: "otlp",
  title: "OTLP/gRPC",
  description: "Sends logs, metrics and traces over OTLP/gRPC, e.g. to a gateway collector or Tempo.",
  signals: ["logs", "metrics", "traces"],
  schema: Closed({
    endpoint: Type.String({
      pattern: "^\\S+$",
      errorMessage: "must be host:port, optionally with an https:// scheme",
      description: "host:port of the gRPC server, e.g. otel-gateway:4317.",
    }),
    headers: Headers({ protocol: "grpc" }),
    ...clientFields(GrpcTls()),
  }),
  check(config, root) {
    return clientProblems(config, root);
  },
  otelcol(config, target) {
    return {
      type: otelcolType(OTLP_GRPC_EXPORTER, target),
      config: {
        endpoint: config.endpoint,
        ...otelcolClient(config),
        ...(Object.keys(config.headers).length > 0 ? { headers: sortedHeaders(config.headers) } : {}),
      },
    };
  },
  alloyEntry: "otelcol.exporter.otlp",
  alloy(config, label) {
    return [
      block("otelcol.exporter.otlp", label, [
        block("client", undefined, [
          attr("endpoint", config.endpoint),
          Object.keys(config.headers).length > 0 && attr("headers", config.headers),
          ...alloyClientMembers(config),
        ]),
        ...alloyExporterBlocks(config),
      ]),
    ];
  },
});
