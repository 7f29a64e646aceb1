/**
 * A collector's throughput as the REST API answers it (/collectors/{id}/throughput
 * and …/throughput/history), declared once for the server's routes, the OpenAPI
 * document and the UI's collector page.
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
    pipelines: Type.Array(
      Type.Object({
        pipelineId: Type.String(),
        sourceId: Type.String(),
        via: Type.Union([Type.Literal("route"), Type.Literal("matchers")], {
          description: "How the pipeline joins the source on this collector: a route, or the collector matching the pipeline's matchers.",
        }),
        routeId: Type.Optional(Type.String({ description: "The route, when via is route." })),
        in: Rate,
        out: Rate,
      }),
      { description: "One per (pipeline, source) flow of the collector's published config, in pipeline then source id order." },
    ),
    process: Type.Object({
      cpu: Nullable(Type.Number({ description: "CPU seconds per second." })),
      memoryRss: Nullable(Type.Number({ description: "Bytes." })),
      uptime: Nullable(Type.Number({ description: "Seconds." })),
    }),
  },
  { title: "Throughput" },
);
export type Throughput = Static<typeof ThroughputSchema>;

export const ThroughputHistorySchema = Type.Object(
  {
    step: Type.Number({ description: "Seconds per bucket (15)." }),
    times: Type.Array(Type.Number(), {
      description:
        "Each bucket's end in seconds since the Unix epoch (UTC, server clock), oldest first: the hour up to the collector's last report. Empty when it has pushed nothing since the server started.",
    }),
    signals: Type.Array(
      Type.Object({
        signal: Signal,
        in: Type.Array(Rate, { description: "Records/s the collector's receivers took in (refused ones too)." }),
        out: Type.Array(Rate, { description: "Records/s its exporters sent." }),
        errors: Type.Array(Rate, { description: "Errors/s summed over its components." }),
      }),
      { description: "Only the signals the collector reported." },
    ),
    process: Type.Object({
      cpu: Type.Array(Rate, { description: "CPU seconds per second." }),
      memoryRss: Type.Array(Nullable(Type.Number()), { description: "Bytes, the last value in each bucket." }),
    }),
  },
  { title: "ThroughputHistory" },
);
export type ThroughputHistory = Static<typeof ThroughputHistorySchema>;
