/** OTLP over gRPC and HTTP: what instrumented applications send. */
import { Type } from "@sinclair/typebox";
import { attr, block } from "../../alloy-syntax.ts";
import { Closed, ListenAddress } from "../../schemas.ts";
import { defineSource } from "../../types.ts";
import { logDelivery } from "../delivery.ts";
import { DELIVERY_UPSTREAM } from "./upstream.ts";

function protocol(name: string, port: number) {
  return Closed(
    {
      enabled: Type.Boolean({ default: true, description: `Accept OTLP over ${name}.` }),
      endpoint: ListenAddress({
        default: `localhost:${port}`,
        description: `host:port to listen on; use 0.0.0.0:${port} to accept data from other hosts.`,
      }),
    },
    { default: {}, title: `OTLP/${name}` },
  );
}

export const otlpSource = defineSource({
  kind: "source",
  type: "otlp",
  title: "OTLP",
  description: "Receives logs, metrics and traces over OTLP (gRPC and HTTP) from instrumented applications.",
  signals: ["logs", "metrics", "traces"],
  delivery: {
    ...logDelivery("otlp", null, DELIVERY_UPSTREAM),
    otelcol: "logs, metrics and traces as sent",
    alloy: "the same: otelcol.receiver.otlp wraps the collector's receiver",
  },
  schema: Closed({ grpc: protocol("gRPC", 4317), http: protocol("HTTP", 4318) }),
  check(config, root) {
    if (config.grpc.enabled || config.http.enabled) return [];
    return [{ path: `${root}.grpc.enabled`, message: "at least one of grpc and http must be enabled" }];
  },
  otelcol(config) {
    const protocols: Record<string, unknown> = {};
    if (config.grpc.enabled) protocols.grpc = { endpoint: config.grpc.endpoint };
    if (config.http.enabled) protocols.http = { endpoint: config.http.endpoint };
    return { type: "otlp", config: { protocols } };
  },
  alloy(config, label, output) {
    return [
      block("otelcol.receiver.otlp", label, [
        config.grpc.enabled && block("grpc", undefined, [attr("endpoint", config.grpc.endpoint)]),
        config.http.enabled && block("http", undefined, [attr("endpoint", config.http.endpoint)]),
        output,
      ]),
    ];
  },
});
