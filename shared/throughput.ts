/**
 * A collector's throughput as the REST API answers it (/collectors/{id}/throughput),
 * declared once for the server's route, the OpenAPI document and the UI's collector page.
 */
import { Type, type Static } from "@sinclair/typebox";
import { Nullable } from "./schema.ts";

const Rate = Nullable(Type.Number({ description: "Per second; null when the collector reports nothing that measures it." }));
const Signal = Type.Union([Type.Literal("logs"), Type.Literal("metrics"), Type.Literal("traces")]);

export const ThroughputSchema = Type.Object(
  {
    window: Type.Number({ description: "Seconds the rates cover (up to about 5 minutes); 0 until two reports arrived." }),
    lastReportAt: Nullable(Type.String({ format: "date-time", description: "When this server last received the collector's metrics." })),
    components: Type.Array(
      Type.Object({
        id: Type.String({ description: "Component id in the rendered config, e.g. otlp/app or filter/logs_app_drop." }),
        kind: Type.Union([Type.Literal("receiver"), Type.Literal("processor"), Type.Literal("exporter")]),
        signal: Signal,
        in: Rate,
        out: Rate,
        errors: Rate,
      }),
    ),
    routes: Type.Array(Type.Object({ routeId: Type.String(), in: Rate, out: Rate })),
    process: Type.Object({
      cpu: Nullable(Type.Number({ description: "CPU seconds per second." })),
      memoryRss: Nullable(Type.Number({ description: "Bytes." })),
      uptime: Nullable(Type.Number({ description: "Seconds." })),
    }),
  },
  { title: "Throughput" },
);
export type Throughput = Static<typeof ThroughputSchema>;
